// The system's libgpiod, v1 (1.6.x) or v2 (2.x); only the CGPIOShim target includes it.
#include <gpiod.h>
