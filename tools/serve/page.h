#pragma once
// The page `octet serve` answers at /: tools/serve/page.html, embedded in the binary at build
// time (tools/serve/CMakeLists.txt), self-contained (no CDN, no external URL).
namespace octet::serve {

extern const char* const kPageHtml;

}  // namespace octet::serve
