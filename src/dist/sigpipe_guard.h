// Gloo writes to its TCP sockets without MSG_NOSIGNAL, so writing to a peer that has just
// died raises SIGPIPE, whose default action kills the process: the survivor of a failed
// peer would die too instead of getting DT_ERR_DISTRIBUTED. (Python ignores SIGPIPE, which
// is why torch.distributed does not see this; a C program does not.) A SigpipeGuard
// blocks SIGPIPE in the calling thread for its life and swallows one that arrived meanwhile
// (the OpenSSL/libcurl technique), leaving the process's signal dispositions alone.
// Gloo's own threads are created inside a guard, so they start with SIGPIPE blocked.
#pragma once
#include <signal.h>

namespace dt::dist {

class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace dt::dist
