/* Floor of "one channel per command" with libssh (the library ratchet uses), no ratchet code:
 * one session, then STEPS times: channel open -> exec CMD -> EOF -> read stdout/stderr to EOF ->
 * exit status -> close/free. Prints the connect time and the per-command times (ms).
 * Used by bench/profile.sh to split ratchet's per-step time into libssh's channel round trip
 * and the host-side cost of the command ratchet sends (its deadline wrapper).
 *
 *   channel_floor PORT KEY KNOWN_HOSTS STEPS CMD        (user root, host 127.0.0.1)
 * build: cc -O2 -o channel_floor channel_floor.c -lssh
 */
#include <libssh/libssh.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s PORT KEY KNOWN_HOSTS STEPS CMD\n", argv[0]);
    return 2;
  }
  int port = atoi(argv[1]), steps = atoi(argv[4]), one = 1;
  double t0 = now_ms();
  ssh_session s = ssh_new();
  ssh_options_set(s, SSH_OPTIONS_HOST, "127.0.0.1");
  ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  ssh_options_set(s, SSH_OPTIONS_USER, "root");
  ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, argv[3]);
  ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &one);
  if (ssh_connect(s) != SSH_OK) { fprintf(stderr, "connect: %s\n", ssh_get_error(s)); return 1; }
  if (ssh_session_is_known_server(s) != SSH_KNOWN_HOSTS_OK) { fprintf(stderr, "host key not known\n"); return 1; }
  ssh_key key;
  if (ssh_pki_import_privkey_file(argv[2], NULL, NULL, NULL, &key) != SSH_OK) { fprintf(stderr, "key\n"); return 1; }
  if (ssh_userauth_publickey(s, NULL, key) != SSH_AUTH_SUCCESS) { fprintf(stderr, "auth: %s\n", ssh_get_error(s)); return 1; }
  double connect_ms = now_ms() - t0;
  double* ms = calloc(steps, sizeof *ms);
  char buf[32768];
  long bytes = 0;
  for (int i = 0; i < steps; i++) {
    double t = now_ms();
    ssh_channel ch = ssh_channel_new(s);
    if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, argv[5]) != SSH_OK) {
      fprintf(stderr, "channel: %s\n", ssh_get_error(s));
      return 1;
    }
    ssh_channel_send_eof(ch);
    for (int st = 0; st < 2; st++) {
      int n;
      while ((n = ssh_channel_read(ch, buf, sizeof buf, st)) > 0) bytes += n;
    }
    int rc = ssh_channel_get_exit_status(ch);
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    ms[i] = now_ms() - t;
    if (rc != 0) { fprintf(stderr, "exit status %d\n", rc); return 1; }
  }
  double sum = 0;
  for (int i = 0; i < steps; i++) sum += ms[i];
  qsort(ms, steps, sizeof *ms, cmp);
  printf("{\"connect_ms\": %.2f, \"steps\": %d, \"median_ms\": %.2f, \"min_ms\": %.2f, \"max_ms\": %.2f, "
         "\"mean_ms\": %.2f, \"bytes\": %ld}\n",
         connect_ms, steps, ms[steps / 2], ms[0], ms[steps - 1], sum / steps, bytes);
  ssh_disconnect(s);
  ssh_free(s);
  return 0;
}
