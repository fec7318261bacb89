#define _GNU_SOURCE
#include "cvendsystem.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>

int cvendsystem_peer_credentials(int socket, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int cvendsystem_accept_nonblocking(int socket) {
    return accept4(socket, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

void cvendsystem_name_this_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int cvendsystem_poll_precise(struct pollfd *fds, nfds_t count, const struct timespec *timeout) {
    return ppoll(fds, count, timeout, NULL);
}
