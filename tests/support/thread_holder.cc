// A stand-in for a CUDA program whose main thread returned while a worker
// thread keeps the device open: `thread_holder FILE` opens FILE in a second
// thread, then the main thread exits (pthread_exit), so the thread-group leader
// is a zombie while the group lives on and holds FILE (listed only under
// /proc/PID/task/TID/fd). Ends on any fatal signal, like any process.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

static void* hold(void* path) {
  if (open(static_cast<const char*>(path), O_RDONLY) < 0) _exit(3);
  for (;;) pause();
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  pthread_t t;
  if (pthread_create(&t, nullptr, hold, argv[1]) != 0) return 3;
  pthread_exit(nullptr);
}
