#ifndef CVENDSYSTEM_H
#define CVENDSYSTEM_H

#include <poll.h>
#include <sys/types.h>
#include <time.h>

/// The credentials of the process at the other end of a Unix socket (SO_PEERCRED, which needs
/// _GNU_SOURCE and so is not visible to Swift's Glibc module). Returns 0, or -1 with errno set.
int cvendsystem_peer_credentials(int socket, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC (accept4 needs _GNU_SOURCE): the next waiting
/// client of a non-blocking listener, or -1 with errno set (EAGAIN when none is waiting).
int cvendsystem_accept_nonblocking(int socket);

/// Names the calling thread (pthread_setname_np needs _GNU_SOURCE); Linux keeps 15 bytes.
void cvendsystem_name_this_thread(const char *name);

/// ppoll(2) with no signal mask (ppoll needs _GNU_SOURCE): poll with a timeout in nanoseconds,
/// where poll(2) rounds to whole milliseconds. `timeout` NULL: no limit.
int cvendsystem_poll_precise(struct pollfd *fds, nfds_t count, const struct timespec *timeout);

#endif
