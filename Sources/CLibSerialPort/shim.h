#ifndef CLIBSERIALPORT_SHIM_H
#define CLIBSERIALPORT_SHIM_H

#include <libserialport.h>
#include <sys/ioctl.h>
#include <termios.h>

/// libserialport 0.1.1 neither sets TIOCEXCL (added in 0.1.2) nor can Swift call the variadic
/// ioctl: claims the tty so that a second opener (another vendd, a stray minicom) gets EBUSY.
static inline int vend_serial_claim_exclusive(int fd) { return ioctl(fd, TIOCEXCL); }

#endif
