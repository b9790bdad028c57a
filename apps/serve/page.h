#pragma once
// The page `octet serve` answers at /: apps/serve/page.html, embedded in the binary at build
// time (apps/serve/CMakeLists.txt), self-contained (no CDN, no external URL).
namespace octet::serve {

extern const char* const kPageHtml;

}  // namespace octet::serve
