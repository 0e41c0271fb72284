// sd_notify(3)'s send, without libsystemd: see notify_socket.c.
#ifndef SKILLS_FUSE_NOTIFY_SOCKET_H
#define SKILLS_FUSE_NOTIFY_SOCKET_H

#include <stddef.h>

/** Sends `length` bytes of `message` to the notification socket at `path`; 0, or an errno value. */
int notify_socket_send(const char *path, const char *message, size_t length);

#endif
