/*
 * devtensor run — a launcher for multi-process jobs, like PyTorch's torchrun.
 *
 *   devtensor run [--nproc-per-node N] [--nnodes M] [--node-rank K] [--master-addr A]
 *                 [--master-port P] [--kill-grace SECONDS] [--no-prefix] -- program [args...]
 *
 * Starts N children (fork + execvp), local ranks 0..N-1, each with the variables of
 * torch.distributed's env:// convention: RANK = K*N + local, LOCAL_RANK = local,
 * WORLD_SIZE = M*N, LOCAL_WORLD_SIZE = N, GROUP_RANK = K, MASTER_ADDR, MASTER_PORT.
 * Without --master-port a single-node job gets a free local TCP port and a multi-node
 * job 29500 (torchrun's default).
 *
 * Each child runs in a process group of its own, so a terminal's signals reach it only
 * through the launcher. Its stdout and stderr come through pipes; the launcher writes
 * them out line by line to its own stdout and stderr, each line prefixed "[rank R] "
 * (whole lines only; the launcher is the only writer, so lines of different ranks never
 * mix). A partial line is held until its newline comes, or until it reaches 1 MiB, or
 * the pipe closes; then it is written with a newline added.
 *
 * SIGINT, SIGTERM and SIGHUP are forwarded to every rank's process group; the launcher
 * waits for the ranks (SIGKILL after the grace period) and exits 128 + the signal. When a
 * rank exits non-zero or is killed by a signal, the launcher reports it, sends SIGTERM
 * to every other rank (SIGKILL after the grace period), keeps draining their output and
 * exits 1, naming the first rank that failed. Exit 0 when every rank exits 0. When the
 * ranks have exited but processes they started still hold their output pipes, those
 * process groups are terminated the same way after a second.
 *
 * Signals reach the main loop through a self-pipe that poll() watches with the children's
 * pipes; poll has a timeout only while a deadline runs (no busy waiting). Every pipe is
 * O_CLOEXEC, and every child is reaped before the launcher returns.
 *
 * POSIX C; needs no devtensor call.
 */
#define _GNU_SOURCE

#include "launcher.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MULTI_NODE_DEFAULT_PORT 29500
#define READ_CHUNK 65536
#define MAX_PARTIAL_LINE (1u << 20) /* a line this long is written out without its end */
#define LINGER_MS 1000              /* ranks exited, their pipes still open: wait this long */
#define ABANDON_MS 1000             /* after SIGKILL: wait this long for the pipes to close */

static const char* const k_me = "devtensor run";

/* ------------------------------------------------------------------------ state */

typedef struct stream {
  int fd;     /* read end of the pipe; -1 once closed */
  int out_fd; /* where its lines go: 1 or 2 */
  char* buf;  /* the bytes read and not written out yet (a partial line) */
  size_t len, cap;
} stream;

typedef struct child {
  pid_t pid; /* 0 until started; also its process group */
  int rank;  /* global rank */
  int alive; /* started and not reaped */
  int status;
  stream io[2]; /* stdout, stderr */
} child;

typedef struct options {
  long nproc, nnodes, node_rank, port; /* port 0: not given */
  const char* master_addr;
  double kill_grace;
  int prefix;
  char** program; /* NULL-terminated, from argv */
} options;

enum phase {
  PHASE_RUN,     /* the ranks run */
  PHASE_LINGER,  /* every rank exited; waiting a little for their pipes to close */
  PHASE_TERM,    /* SIGTERM (or a forwarded signal) sent; SIGKILL at the deadline */
  PHASE_KILL,    /* SIGKILL sent; the pipes are abandoned at the deadline */
  PHASE_ABANDONED
};

static child* g_children;
static int g_nchildren; /* started */
static int g_live;      /* started and not reaped */
static int g_prefix = 1;
static int g_out_dead[3]; /* writing to fd 1 / 2 failed (EPIPE, ...): output dropped */

static enum phase g_phase = PHASE_RUN;
static long long g_deadline = -1; /* monotonic ms; -1: none */
static long long g_grace_ms;
static int g_term_sig;           /* the first SIGINT/SIGTERM/SIGHUP received */
static const child* g_first_fail; /* the first rank that failed on its own */
static int g_first_fail_status;
static int g_start_failed;

/* The self-pipe: the signal handler writes the signal number as one byte. */
static int g_self_pipe[2] = {-1, -1};
static const int k_fwd_signals[3] = {SIGINT, SIGTERM, SIGHUP};
static int g_fwd_handled[3]; /* a handler is installed (the signal was not ignored) */
static struct sigaction g_old_actions[3], g_old_chld, g_old_pipe;
static sigset_t g_orig_mask;

/* ------------------------------------------------------------------ small helpers */

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

/* Writes everything unless the file is gone (then output to it is dropped from now on). */
static void write_all(int fd, const char* p, size_t n) {
  if (g_out_dead[fd]) return;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      /* a non-blocking stdout inherited from our parent */
      struct pollfd pfd;
      pfd.fd = fd;
      pfd.events = POLLOUT;
      pfd.revents = 0;
      (void)poll(&pfd, 1, -1);
    } else {
      g_out_dead[fd] = 1;
      return;
    }
  }
}

/* A line of the launcher's own to stderr: "devtensor run: ...\n". */
static void say(const char* fmt, ...) {
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s: ", k_me);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof buf) n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof buf - 1) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  write_all(2, buf, (size_t)n);
}

static void signal_group(const child* c, int sig) {
  if (kill(-c->pid, sig) != 0 && errno == ESRCH && c->alive) {
    (void)kill(c->pid, sig); /* the program moved itself to another group */
  }
}

/* Out of memory or poll failing: stop everything the hard way and leave. */
static void die_hard(const char* what) {
  int i;
  say("%s: %s; killing every rank", what, strerror(errno));
  for (i = 0; i < g_nchildren; ++i) {
    if (g_children[i].alive) signal_group(&g_children[i], SIGKILL);
  }
  for (i = 0; i < g_nchildren; ++i) {
    if (g_children[i].alive) {
      while (waitpid(g_children[i].pid, NULL, 0) < 0 && errno == EINTR) {
      }
    }
  }
  exit(1);
}

static void* xrealloc(void* p, size_t n) {
  void* q = realloc(p, n ? n : 1);
  if (!q) die_hard("out of memory");
  return q;
}

static int stream_open(const child* c, int which) { return c->io[which].fd >= 0; }

static int child_has_open_stream(const child* c) {
  return stream_open(c, 0) || stream_open(c, 1);
}

static int open_streams(void) {
  int i, n = 0;
  for (i = 0; i < g_nchildren; ++i) n += stream_open(&g_children[i], 0) + stream_open(&g_children[i], 1);
  return n;
}

/* --------------------------------------------------------------------- output */

/* Writes the complete lines held in s, each prefixed; with flush_partial also the
 * partial line at the end (with a newline added). One write per call. */
static void emit(const child* c, stream* s, int flush_partial) {
  char prefix[32];
  size_t plen = 0, end = 0, nlines = 0, rest, outlen, i, o = 0;
  const char* nl;
  char* out;
  int partial;

  if (s->len == 0) return;
  if (g_prefix) plen = (size_t)snprintf(prefix, sizeof prefix, "[rank %d] ", c->rank);
  nl = (const char*)memrchr(s->buf, '\n', s->len);
  if (nl) end = (size_t)(nl - s->buf) + 1;
  rest = s->len - end;
  partial = rest > 0 && (flush_partial || rest >= MAX_PARTIAL_LINE);
  if (end == 0 && !partial) return;
  for (i = 0; i < end; ++i) nlines += s->buf[i] == '\n';
  outlen = end + nlines * plen + (partial ? plen + rest + 1 : 0);
  out = (char*)xrealloc(NULL, outlen);
  {
    size_t start = 0;
    for (i = 0; i < end; ++i) {
      if (s->buf[i] != '\n') continue;
      memcpy(out + o, prefix, plen);
      o += plen;
      memcpy(out + o, s->buf + start, i + 1 - start);
      o += i + 1 - start;
      start = i + 1;
    }
  }
  if (partial) {
    memcpy(out + o, prefix, plen);
    o += plen;
    memcpy(out + o, s->buf + end, rest);
    o += rest;
    out[o++] = '\n';
    s->len = 0;
  } else {
    memmove(s->buf, s->buf + end, rest);
    s->len = rest;
  }
  write_all(s->out_fd, out, o);
  free(out);
}

static void close_stream(const child* c, stream* s) {
  emit(c, s, 1);
  close(s->fd);
  s->fd = -1;
  free(s->buf);
  s->buf = NULL;
  s->len = s->cap = 0;
}

/* One read (poll said the pipe is readable or closed). Returns 1 when it read something,
 * 0 when nothing was there, -1 when the pipe is closed now. */
static int read_stream(const child* c, stream* s) {
  ssize_t r;
  if (s->cap - s->len < READ_CHUNK) {
    size_t cap = s->cap ? s->cap : READ_CHUNK;
    while (cap - s->len < READ_CHUNK) cap *= 2;
    s->buf = (char*)xrealloc(s->buf, cap);
    s->cap = cap;
  }
  r = read(s->fd, s->buf + s->len, READ_CHUNK);
  if (r > 0) {
    s->len += (size_t)r;
    emit(c, s, 0);
    return 1;
  }
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  close_stream(c, s); /* end of file (or an error: nothing more will come) */
  return -1;
}

/* ------------------------------------------------------------------ stopping */

/* Whether stopping concerns c's process group: c runs, or it exited but its pipes are
 * still open and its group still has members (processes it started). A reaped rank's
 * group is signalled only while it has members (while it has, no new process can get its
 * id). */
static int group_target(const child* c) {
  if (c->pid <= 0) return 0;
  if (c->alive) return 1;
  return child_has_open_stream(c) && kill(-c->pid, 0) == 0;
}

static void signal_groups(int sig) {
  int i;
  for (i = 0; i < g_nchildren; ++i) {
    if (group_target(&g_children[i])) signal_group(&g_children[i], sig);
  }
}

/* Starts stopping the ranks with sig: SIGKILL follows after the grace period. A signal
 * from the user while they stop is forwarded again; nothing restarts the clock. */
static void begin_stop(int sig, int from_user) {
  if (g_phase == PHASE_TERM) {
    if (from_user) signal_groups(sig);
    return;
  }
  if (g_phase > PHASE_TERM) return;
  signal_groups(sig);
  g_phase = PHASE_TERM;
  g_deadline = now_ms() + g_grace_ms;
}

/* Reads what is left in a pipe that something outside the rank's process group keeps
 * open (a bounded amount), writes it out and closes the pipe. */
static void abandon_stream(const child* c, stream* s) {
  int rounds;
  int fl = fcntl(s->fd, F_GETFL);
  if (fl >= 0) (void)fcntl(s->fd, F_SETFL, fl | O_NONBLOCK);
  for (rounds = 0; rounds < 64; ++rounds) {
    if (read_stream(c, s) <= 0) break;
  }
  if (s->fd >= 0) close_stream(c, s);
}

/* The deadline passed: go one step further. */
static void escalate(void) {
  int i;
  switch (g_phase) {
    case PHASE_LINGER:
      for (i = 0; i < g_nchildren; ++i) {
        if (group_target(&g_children[i])) {
          say("rank %d exited but processes it started still hold its output; terminating "
              "its process group",
              g_children[i].rank);
          signal_group(&g_children[i], SIGTERM);
        }
      }
      g_phase = PHASE_TERM;
      g_deadline = now_ms() + g_grace_ms;
      break;
    case PHASE_TERM:
      for (i = 0; i < g_nchildren; ++i) {
        const child* c = &g_children[i];
        if (!group_target(c)) continue;
        if (c->alive) {
          say("rank %d (pid %ld) still running after the grace period; sending SIGKILL",
              c->rank, (long)c->pid);
        } else {
          say("processes started by rank %d still running after the grace period; sending "
              "SIGKILL",
              c->rank);
        }
        signal_group(c, SIGKILL);
      }
      g_phase = PHASE_KILL;
      g_deadline = now_ms() + ABANDON_MS;
      break;
    case PHASE_KILL:
      for (i = 0; i < g_nchildren; ++i) {
        child* c = &g_children[i];
        int k;
        for (k = 0; k < 2; ++k) {
          if (stream_open(c, k)) abandon_stream(c, &c->io[k]);
        }
      }
      g_phase = PHASE_ABANDONED;
      g_deadline = -1;
      break;
    default:
      g_deadline = -1;
      break;
  }
}

static void describe_status(int status, char* buf, size_t cap) {
  if (WIFEXITED(status)) {
    snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    snprintf(buf, cap, "was killed by signal %s (%d)", name ? name : "?", sig);
  } else {
    snprintf(buf, cap, "ended with wait status %d", status);
  }
}

/* Reaps every child that has exited. Returns 1 when one failed on its own. */
static int reap(void) {
  int failed = 0;
  for (;;) {
    int st = 0, i;
    child* c = NULL;
    pid_t p = waitpid(-1, &st, WNOHANG);
    if (p < 0 && errno == EINTR) continue;
    if (p <= 0) break;
    for (i = 0; i < g_nchildren; ++i) {
      if (g_children[i].pid == p) c = &g_children[i];
    }
    if (!c || !c->alive) continue;
    c->alive = 0;
    c->status = st;
    --g_live;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
    if (g_phase >= PHASE_TERM) continue; /* stopped by us, not a cause */
    {
      char how[128];
      describe_status(st, how, sizeof how);
      say("rank %d (pid %ld) %s", c->rank, (long)c->pid, how);
    }
    if (!g_first_fail) {
      g_first_fail = c;
      g_first_fail_status = st;
    }
    failed = 1;
  }
  return failed;
}

/* ------------------------------------------------------------------- signals */

static void on_signal(int sig) {
  int saved = errno;
  unsigned char b = (unsigned char)sig;
  ssize_t r = write(g_self_pipe[1], &b, 1); /* full pipe: the byte is not needed */
  (void)r;
  errno = saved;
}

static int install_signals(void) {
  struct sigaction sa, cur;
  int i;
  if (pipe2(g_self_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  sigprocmask(SIG_SETMASK, NULL, &g_orig_mask);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (i = 0; i < 3; ++i) {
    /* A signal ignored when we started (nohup, a background job) stays ignored, for the
     * launcher and its ranks alike. */
    sigaction(k_fwd_signals[i], NULL, &cur);
    g_fwd_handled[i] = cur.sa_handler != SIG_IGN;
    if (g_fwd_handled[i]) sigaction(k_fwd_signals[i], &sa, &g_old_actions[i]);
  }
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, &g_old_chld);
  /* A closed stdout must not kill the launcher while ranks run. */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, &g_old_pipe);
  return 0;
}

static void restore_signals(void) {
  int i;
  for (i = 0; i < 3; ++i) {
    if (g_fwd_handled[i]) sigaction(k_fwd_signals[i], &g_old_actions[i], NULL);
  }
  sigaction(SIGCHLD, &g_old_chld, NULL);
  sigaction(SIGPIPE, &g_old_pipe, NULL);
  close(g_self_pipe[0]);
  close(g_self_pipe[1]);
  g_self_pipe[0] = g_self_pipe[1] = -1;
}

static void block_signals(sigset_t* old) {
  sigset_t set;
  int i;
  sigemptyset(&set);
  for (i = 0; i < 3; ++i) sigaddset(&set, k_fwd_signals[i]);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, old);
}

/* ------------------------------------------------------------------ children */

/* In the child after fork: only async-signal-safe calls (snprintf and strerror aside,
 * on the error path). */
static void exec_child(char** program, int rank, int out_w, int err_w) {
  struct sigaction dfl;
  char msg[512];
  int i, e, n;
  ssize_t r;

  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (i = 0; i < 3; ++i) {
    if (g_fwd_handled[i]) sigaction(k_fwd_signals[i], &dfl, NULL);
  }
  sigaction(SIGCHLD, &g_old_chld, NULL);
  sigaction(SIGPIPE, &g_old_pipe, NULL);
  (void)setpgid(0, 0);
  if (dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0) _exit(127);
  sigprocmask(SIG_SETMASK, &g_orig_mask, NULL);
  execvp(program[0], program);
  e = errno;
  n = snprintf(msg, sizeof msg, "%s: rank %d: cannot run %s: %s\n", k_me, rank, program[0],
               strerror(e));
  if (n > 0) {
    if ((size_t)n >= sizeof msg) n = (int)sizeof msg - 1;
    r = write(STDERR_FILENO, msg, (size_t)n);
    (void)r;
  }
  _exit(127);
}

static void set_env_long(const char* name, long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%ld", v);
  if (setenv(name, buf, 1) != 0) die_hard("setenv");
}

/* Starts local rank `local`; returns 0, or -1 with errno set. */
static int start_child(const options* o, int local) {
  child* c = &g_children[g_nchildren];
  int pout[2] = {-1, -1}, perr[2] = {-1, -1}, e;
  sigset_t old;
  pid_t pid;

  c->rank = (int)(o->node_rank * o->nproc + local);
  c->io[0].fd = c->io[1].fd = -1;
  set_env_long("RANK", c->rank);
  set_env_long("LOCAL_RANK", local);

  if (pipe2(pout, O_CLOEXEC) != 0) return -1;
  if (pipe2(perr, O_CLOEXEC) != 0) {
    e = errno;
    close(pout[0]);
    close(pout[1]);
    errno = e;
    return -1;
  }
  /* Blocked across fork: a signal for the launcher must not run our handler in the
   * child before it resets it. */
  block_signals(&old);
  pid = fork();
  if (pid == 0) exec_child(o->program, c->rank, pout[1], perr[1]);
  e = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  close(pout[1]);
  close(perr[1]);
  if (pid < 0) {
    close(pout[0]);
    close(perr[0]);
    errno = e;
    return -1;
  }
  (void)setpgid(pid, pid); /* as the child does: whichever runs first */
  c->pid = pid;
  c->alive = 1;
  c->io[0].fd = pout[0];
  c->io[0].out_fd = STDOUT_FILENO;
  c->io[1].fd = perr[0];
  c->io[1].out_fd = STDERR_FILENO;
  ++g_nchildren;
  ++g_live;
  return 0;
}

/* ------------------------------------------------------------------ main loop */

static void run_loop(void) {
  struct pollfd* fds = (struct pollfd*)xrealloc(NULL, (size_t)(1 + 2 * g_nchildren) * sizeof *fds);
  stream** owner = (stream**)xrealloc(NULL, (size_t)(1 + 2 * g_nchildren) * sizeof *owner);
  const child** owner_child =
      (const child**)xrealloc(NULL, (size_t)(1 + 2 * g_nchildren) * sizeof *owner_child);

  while (g_live > 0 || open_streams() > 0) {
    long long now = now_ms();
    int nfds = 1, timeout = -1, i, k, n, failed;

    if (g_phase == PHASE_RUN && g_live == 0) {
      g_phase = PHASE_LINGER;
      g_deadline = now + LINGER_MS;
    }
    if (g_deadline >= 0 && now >= g_deadline) {
      escalate();
      continue;
    }
    if (g_deadline >= 0) {
      long long left = g_deadline - now;
      timeout = left > INT_MAX ? INT_MAX : (int)left;
    }

    fds[0].fd = g_self_pipe[0];
    fds[0].events = POLLIN;
    fds[0].revents = 0;
    for (i = 0; i < g_nchildren; ++i) {
      for (k = 0; k < 2; ++k) {
        if (!stream_open(&g_children[i], k)) continue;
        fds[nfds].fd = g_children[i].io[k].fd;
        fds[nfds].events = POLLIN;
        fds[nfds].revents = 0;
        owner[nfds] = &g_children[i].io[k];
        owner_child[nfds] = &g_children[i];
        ++nfds;
      }
    }

    n = poll(fds, (nfds_t)nfds, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      die_hard("poll");
    }

    /* Signals first: a rank that dies of a signal we forward is no cause of failure. */
    if (fds[0].revents & POLLIN) {
      unsigned char sigs[64];
      ssize_t r;
      while ((r = read(g_self_pipe[0], sigs, sizeof sigs)) > 0) {
        for (i = 0; i < r; ++i) {
          int sig = sigs[i];
          if (sig == SIGCHLD) continue;
          if (!g_term_sig) {
            g_term_sig = sig;
            say("received signal %s (%d); forwarding it to every rank", strsignal(sig), sig);
          }
          begin_stop(sig, 1);
        }
      }
    }
    /* Output before reaping, so that a rank's last words come before its epitaph. */
    for (i = 1; i < nfds; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
        (void)read_stream(owner_child[i], owner[i]);
      }
    }
    failed = reap();
    if (failed) begin_stop(SIGTERM, 0);
  }
  free(fds);
  free(owner);
  free((void*)owner_child);
}

/* ------------------------------------------------------------- command line */

static void run_usage(FILE* f) {
  fprintf(f,
          "usage: devtensor run [options] [--] program [args...]\n"
          "\n"
          "Starts N copies of program with torch.distributed's env:// variables set: RANK,\n"
          "LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT.\n"
          "Their output lines are prefixed \"[rank R] \". When a rank fails the others are\n"
          "stopped; SIGINT, SIGTERM and SIGHUP are forwarded to every rank.\n"
          "\n"
          "options:\n"
          "  --nproc-per-node N    processes on this node (default 1)\n"
          "  --nnodes M            nodes in the job (default 1)\n"
          "  --node-rank K         this node's index, 0..M-1 (default 0)\n"
          "  --master-addr A       address of the node of rank 0 (default 127.0.0.1)\n"
          "  --master-port P       its port (default: a free local port when M is 1, else 29500)\n"
          "  --kill-grace SECONDS  time between SIGTERM and SIGKILL when stopping ranks\n"
          "                        (default 5)\n"
          "  --no-prefix           do not prefix output lines with the rank\n"
          "  -h, --help            print this help\n"
          "\n"
          "exit status: 0 every rank exited 0, 1 a rank failed, 2 a usage error, 128+N the\n"
          "launcher received signal N.\n");
}

static int usage_error(const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", k_me);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n\n", stderr);
  run_usage(stderr);
  return EXIT_USAGE;
}

/* "--nproc-per-node" matches "--nproc-per-node" and "--nproc_per_node" (torchrun's
 * spellings); *value is set for "--name=value". */
static int option_is(const char* arg, const char* name, const char** value) {
  size_t i;
  for (i = 0; name[i]; ++i) {
    char a = arg[i] == '_' ? '-' : arg[i];
    if (a != name[i]) return 0;
  }
  if (arg[i] == '\0') {
    *value = NULL;
    return 1;
  }
  if (arg[i] == '=') {
    *value = arg + i + 1;
    return 1;
  }
  return 0;
}

static int parse_int(const char* s, long* out) {
  char* end;
  long v;
  if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9'))) return 0;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX) return 0;
  *out = v;
  return 1;
}

/* Returns -1 when the options are good, else the exit status (0 for --help). */
static int parse_options(int argc, char** argv, options* o) {
  int i;
  int port_given = 0;
  o->nproc = 1;
  o->nnodes = 1;
  o->node_rank = 0;
  o->port = 0;
  o->master_addr = "127.0.0.1";
  o->kill_grace = 5.0;
  o->prefix = 1;
  o->program = NULL;

  for (i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = NULL;
    long* target = NULL;
    int which = -1;
    static const char* const names[] = {"--nproc-per-node", "--nnodes", "--node-rank",
                                        "--master-port", "--master-addr", "--kill-grace"};
    if (strcmp(a, "--") == 0) {
      if (i + 1 >= argc) return usage_error("no program given after '--'");
      o->program = argv + i + 1;
      break;
    }
    if (a[0] != '-') {
      o->program = argv + i;
      break;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      run_usage(stdout);
      return 0;
    }
    if (option_is(a, "--no-prefix", &v) && v == NULL) {
      o->prefix = 0;
      continue;
    }
    for (which = 0; which < 6; ++which) {
      if (option_is(a, names[which], &v)) break;
    }
    if (which == 6) return usage_error("unknown option '%s'", a);
    if (v == NULL) {
      if (i + 1 >= argc) return usage_error("option '%s' needs a value", a);
      v = argv[++i];
    }
    switch (which) {
      case 0: target = &o->nproc; break;
      case 1: target = &o->nnodes; break;
      case 2: target = &o->node_rank; break;
      case 3: target = &o->port; port_given = 1; break;
      case 4:
        if (*v == '\0') return usage_error("--master-addr needs a non-empty address");
        o->master_addr = v;
        continue;
      default: {
        char* end;
        double g;
        errno = 0;
        g = strtod(v, &end);
        if (*v == '\0' || *end != '\0' || errno != 0 || !(g >= 0.0 && g <= 1e6)) {
          return usage_error("--kill-grace needs a number of seconds from 0 to 1e6, not '%s'", v);
        }
        o->kill_grace = g;
        continue;
      }
    }
    if (!parse_int(v, target)) {
      return usage_error("%s needs an integer, not '%s'", names[which], v);
    }
  }

  if (o->nproc < 1) return usage_error("--nproc-per-node must be at least 1, not %ld", o->nproc);
  if (o->nnodes < 1) return usage_error("--nnodes must be at least 1, not %ld", o->nnodes);
  if ((long long)o->nproc * (long long)o->nnodes > INT_MAX) {
    return usage_error("--nproc-per-node times --nnodes is too large");
  }
  if (o->node_rank < 0 || o->node_rank >= o->nnodes) {
    return usage_error("--node-rank must be from 0 to %ld (--nnodes %ld), not %ld",
                       o->nnodes - 1, o->nnodes, o->node_rank);
  }
  if (port_given && (o->port < 1 || o->port > 65535)) {
    return usage_error("--master-port must be from 1 to 65535, not %ld", o->port);
  }
  if (o->program == NULL) return usage_error("no program given");
  return -1;
}

/* A free TCP port on 127.0.0.1 (bound, read, released). Returns 0 or -1. */
static int pick_free_port(long* port) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e;
  if (fd < 0) return -1;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(0);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0 ||
      getsockname(fd, (struct sockaddr*)&a, &len) != 0) {
    e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  close(fd);
  *port = ntohs(a.sin_port);
  return 0;
}

/* Makes sure fds 0..2 are open, so that no pipe lands on one of them. */
static void ensure_std_fds(void) {
  int fd;
  for (fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (n >= 0 && n != fd) close(n); /* lower fds are open: n is fd, or fd was opened */
    }
  }
}

int launcher_main(int argc, char** argv) {
  options o;
  int rc, local;

  rc = parse_options(argc, argv, &o);
  if (rc >= 0) return rc;
  fflush(stdout);
  ensure_std_fds();
  g_prefix = o.prefix;
  g_grace_ms = (long long)(o.kill_grace * 1000.0 + 0.5);

  if (o.port == 0) {
    if (o.nnodes > 1) {
      o.port = MULTI_NODE_DEFAULT_PORT;
    } else if (pick_free_port(&o.port) != 0) {
      say("cannot choose a free port on 127.0.0.1: %s; pass --master-port", strerror(errno));
      return 1;
    }
  }
  if (install_signals() != 0) {
    say("pipe: %s", strerror(errno));
    return 1;
  }

  set_env_long("WORLD_SIZE", o.nproc * o.nnodes);
  set_env_long("LOCAL_WORLD_SIZE", o.nproc);
  set_env_long("GROUP_RANK", o.node_rank);
  set_env_long("MASTER_PORT", o.port);
  if (setenv("MASTER_ADDR", o.master_addr, 1) != 0) die_hard("setenv");

  g_children = (child*)xrealloc(NULL, (size_t)o.nproc * sizeof *g_children);
  memset(g_children, 0, (size_t)o.nproc * sizeof *g_children);
  for (local = 0; local < (int)o.nproc; ++local) {
    if (start_child(&o, local) != 0) {
      say("cannot start rank %ld: %s", o.node_rank * o.nproc + local, strerror(errno));
      g_start_failed = 1;
      begin_stop(SIGTERM, 0);
      break;
    }
  }

  run_loop();

  if (g_first_fail) {
    char how[128];
    describe_status(g_first_fail_status, how, sizeof how);
    say("failed: rank %d %s", g_first_fail->rank, how);
  }
  free(g_children);
  g_children = NULL;
  restore_signals();
  if (g_term_sig) return 128 + g_term_sig;
  if (g_first_fail || g_start_failed) return 1;
  return 0;
}
