// The key-value store of file:// rendezvous: one file on a file system every rank sees
// (a local path, or NFS between machines), as torch.distributed's FileStore. Records
// [u32 key length][key][u32 value length][value] are appended under an exclusive flock;
// the last value of a key wins. Every rank counts itself in on open and out on close;
// the last one out deletes the file, so the same path can serve the next run. A run
// that crashed leaves the file behind: delete it before reusing the path.
#pragma once
#include <string>

#include "dist/store.h"

namespace dt::dist {

class FileStore final : public KeyValueStore {
 public:
  FileStore(std::string path, int rank, ms timeout);
  ~FileStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  bool try_get(const std::string& key, std::vector<char>* value) override;
  // Ranks on this host whose process no longer exists (their pid is published).
  std::vector<int> exited_ranks() override;
  std::string where() const override { return "file://" + path_; }

 private:
  // Runs f(fd) with the file locked.
  template <typename F> auto locked(F&& f);

  std::string path_;
  int rank_;
  int fd_ = -1;
};

}  // namespace dt::dist
