#include <zmq.h>

// The Linux calls the socket layer needs beside libzmq, which Swift's Glibc module does not
// export: an eventfd to wake a poll loop, and thread names for `top -H`.
#include <sys/eventfd.h>
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);
