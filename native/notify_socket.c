// One datagram to a service manager's notification socket (sd_notify(3)'s protocol): the socket
// path as $NOTIFY_SOCKET gives it ("@..." is an abstract socket). Which messages, and when, is
// decided in TypeScript (src/fuse/service-notify.ts); this only sends.
#include "notify_socket.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_socket_send(const char *path, const char *message, size_t length) {
  struct sockaddr_un address;
  size_t path_length = strlen(path);
  if (path_length == 0 || path_length >= sizeof address.sun_path || (path[0] != '/' && path[0] != '@')) return EINVAL;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path, path_length);
  if (path[0] == '@') address.sun_path[0] = '\0';
  socklen_t address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_length + (path[0] == '@' ? 0 : 1));
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ssize_t sent = sendto(fd, message, length, MSG_NOSIGNAL, (struct sockaddr *)&address, address_length);
  int error = sent < 0 ? errno : (size_t)sent != length ? EMSGSIZE : 0;
  close(fd);
  return error;
}
