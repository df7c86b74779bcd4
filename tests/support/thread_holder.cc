// A stand-in for a CUDA program whose main thread returned while a worker
// thread keeps the device open: `thread_holder FILE` opens FILE in a second
// thread, then the main thread exits (pthread_exit), so the thread-group leader
// is a zombie while the group lives on and holds FILE (listed only under
// /proc/PID/task/TID/fd). `thread_holder --unshare FILE`: the second thread
// first takes a descriptor table of its own (unshare(CLONE_FILES)), then opens
// FILE, and the main thread stays: FILE is listed only under
// /proc/PID/task/TID/fd of that thread, never under /proc/PID/fd.
// `thread_holder --map-unlink FILE`: maps FILE (shared, read-only), closes it
// and removes its name: only /proc/PID/maps holds it, as "FILE (deleted)".
// Ends on any fatal signal, like any process.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static bool own_table = false;

static void* hold(void* path) {
  if (own_table && unshare(CLONE_FILES) != 0) _exit(4);
  if (open(static_cast<const char*>(path), O_RDONLY) < 0) _exit(3);
  for (;;) pause();
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--map-unlink") == 0) {
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0 || mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) return 3;
    if (close(fd) != 0 || unlink(argv[2]) != 0) return 4;
    for (;;) pause();
  }
  if (argc == 3 && strcmp(argv[1], "--unshare") == 0) {
    own_table = true;
    ++argv;
  } else if (argc != 2) {
    return 2;
  }
  pthread_t t;
  if (pthread_create(&t, nullptr, hold, argv[1]) != 0) return 3;
  if (!own_table) pthread_exit(nullptr);
  for (;;) pause();
}
