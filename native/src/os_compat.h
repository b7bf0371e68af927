// The few POSIX file calls the engine makes, on Windows (MinGW-w64): the session files' open,
// sync, replace-by-rename and read-only mapping. On Linux these are the POSIX calls themselves.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdio>
#include <string>

#ifdef _WIN32
#include <io.h>
#include <process.h>
#include <windows.h>
#else
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace strata::os {

#ifdef _WIN32
// Binary mode (no CRLF translation) and not inherited by child processes.
constexpr int kOpenFlags = O_BINARY | O_NOINHERIT;

inline std::wstring Wide(const std::string& utf8) {
  if (utf8.empty()) return std::wstring();
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring w(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), w.data(), n);
  return w;
}

inline std::string Narrow(const std::wstring& w) {
  if (w.empty()) return std::string();
  const int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
  return s;
}

// Paths are UTF-8 everywhere in the engine; the wide calls take them whatever the ANSI code page.
inline int Open(const std::string& path, int flags, int mode = 0) {
  return ::_wopen(Wide(path).c_str(), flags | kOpenFlags, mode);
}
inline int SyncData(int fd) { return ::_commit(fd); }
// Windows' rename refuses an existing target; the session store overwrites one on each save.
inline int Replace(const std::string& from, const std::string& to) {
  return MoveFileExW(Wide(from).c_str(), Wide(to).c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : -1;
}
inline int Remove(const std::string& path) { return ::_wunlink(Wide(path).c_str()); }
// Folders cannot be opened for a sync on Windows; MOVEFILE_WRITE_THROUGH made the rename durable.
inline void SyncDir(const std::string&) {}
inline int Pid() { return ::_getpid(); }
inline FILE* OpenFile(const std::string& path, const char* mode) { return ::_wfopen(Wide(path).c_str(), Wide(mode).c_str()); }

// A read-only view of the whole file, or nullptr.
inline void* MapReadOnly(int fd, size_t size) {
  HANDLE file = reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
  HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (mapping == nullptr) return nullptr;
  void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
  CloseHandle(mapping);  // the view keeps the mapping alive
  return view;
}
inline void Unmap(const void* data, size_t) { UnmapViewOfFile(data); }
#else
constexpr int kOpenFlags = O_CLOEXEC;

inline int Open(const std::string& path, int flags, int mode = 0) { return ::open(path.c_str(), flags | kOpenFlags, mode); }
// fdatasync: the data and what reading it back needs (size, blocks), not the timestamps.
inline int SyncData(int fd) { return ::fdatasync(fd); }
inline int Replace(const std::string& from, const std::string& to) { return ::rename(from.c_str(), to.c_str()); }
inline int Remove(const std::string& path) { return ::unlink(path.c_str()); }
// The rename itself is durable once the folder is synced.
inline void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}
inline int Pid() { return static_cast<int>(::getpid()); }
inline FILE* OpenFile(const std::string& path, const char* mode) { return std::fopen(path.c_str(), mode); }

// One mapping, its pages faulted in now; nullptr on failure.
inline void* MapReadOnly(int fd, size_t size) {
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  return map == MAP_FAILED ? nullptr : map;
}
inline void Unmap(const void* data, size_t size) { ::munmap(const_cast<void*>(data), size); }
#endif

}  // namespace strata::os
