{
  "variables": {
    "sanitize%": "0",
    "fuse_static%": "<!(test -f \"$(pkg-config --variable=libdir fuse3)/libfuse3.a\" && echo 1 || echo 0)"
  },
  "targets": [
    {
      "target_name": "skills_fuse",
      "sources": ["binding.c", "forward.c", "session.c", "counted_opens.c", "table_replies.c", "entry_table.c", "verified_copy.c", "notify_socket.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "<!@(pkg-config --cflags fuse3)"],
      "ldflags": ["-Wl,--version-script=<(module_root_dir)/libfuse3.map"],
      "conditions": [
        ["fuse_static==1", {
          "libraries": ["<!(pkg-config --variable=libdir fuse3)/libfuse3.a", "-lpthread", "-ldl"]
        }, {
          "libraries": ["<!@(pkg-config --libs fuse3)", "-ldl"]
        }],
        ["sanitize==1", {
          "cflags": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}
