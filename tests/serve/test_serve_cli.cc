// `octet serve` from the command line: its help, its one-line refusals (a missing model, a
// busy port, an --int8 that is not quantized), and a clean stop on SIGTERM / SIGINT. These
// servers quantize dynamically (--mode dynamic: no dataset) and skip the speed table and the
// gallery, so each starts in well under a second.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "tests/serve/server_process.h"
#include "tests/serve/serve_fixture.h"
#include "tests/util/cli_runner.h"

namespace octet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kQuick = " --mode dynamic --speed-seconds 0 --samples 0";

TEST(ServeCli, HelpExplainsOptionsAndApi) {
  const auto r = run_cli("serve --help", true);
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"--int8", "--calib", "--port", "--host", "--max-upload-bytes", "--max-pixels", "--samples",
                        "--http-threads", "--speed-seconds", "POST /api/classify", "GET  /api/model", "{\"error\"",
                        "--max-connections", "--max-connections-per-client", "--header-timeout", "--body-timeout",
                        "--memory-budget", "405 wrong method", "408", "inflates past", "never by path"})
    EXPECT_THAT(r.output, HasSubstr(s));
  EXPECT_THAT(run_cli("frobnicate", true).output, HasSubstr("serve"));
}

TEST(ServeCli, AMissingModelIsOneLineAndExitOne) {
  const auto r = run_cli("serve /no/such/model.onnx --port 0", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.output, "octet: error: /no/such/model.onnx: no such file\n");
}

TEST(ServeCli, AnInt8ModelThatIsNotQuantizedIsRefused) {
  const auto r = run_cli("serve " + kTinyNet.string() + " --int8 " + kTinyNet.string() + " --port 0", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output, HasSubstr("octet: error: --int8 "));
  EXPECT_THAT(r.output, HasSubstr("is not quantized"));
  EXPECT_EQ(run_cli("serve " + kTinyNet.string() + " --int8 x.onnx --calib fashion-mnist:train", true).status, 2);
}

TEST(ServeCli, ABusyPortIsOneLineAndExitOne) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(s, 1), 0);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ScratchDir dir;
  const auto err = dir.path / "stderr";
  const auto r = run_shell("timeout 60 " + std::string(OCTET_CLI) + " serve " + kTinyNet.string() + kQuick +
                           " --host 127.0.0.1 --port " + std::to_string(port) + " >/dev/null 2>" + err.string() +
                           "; echo $?; tail -n 1 " + err.string());
  close(s);
  EXPECT_EQ(r.output, "1\noctet: error: cannot listen on 127.0.0.1:" + std::to_string(port) +
                          ": the port is in use (pick another with --port, or --port 0)\n");
}

// httplib binds with SO_REUSEPORT by default, which would let two servers share a port.
TEST(ServeCli, ASecondServerCannotTakeThePortOfTheFirst) {
  ScratchDir dir;
  ServerProcess first(kTinyNet.string() + kQuick, dir.path / "first.log");
  ASSERT_TRUE(first.started()) << first.log_text();
  const auto r = run_shell("timeout 60 " + std::string(OCTET_CLI) + " serve " + kTinyNet.string() + kQuick +
                           " --host 127.0.0.1 --port " + std::to_string(first.port()) + " 2>&1 >/dev/null; echo $?");
  EXPECT_THAT(r.output, HasSubstr("the port is in use"));
  EXPECT_THAT(r.output, ::testing::EndsWith("\n1\n"));
  EXPECT_EQ(first.stop(SIGTERM), 0);
}

// Without --max-batch, a version gathers batches only when one run takes every core (runs side by
// side already keep the cores busy, and a batch would only add its wait).
TEST(ServeCli, BatchesByDefaultOnlyWhenOneRunTakesEveryCore) {
  ScratchDir dir;
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  for (int threads : {cores, 1}) {
    if (threads == 1 && cores == 1) continue;  // one core: the first pass was this one
    ServerProcess server(kTinyNet.string() + kQuick + " --threads " + std::to_string(threads),
                         dir.path / "server.log");
    ASSERT_TRUE(server.started()) << server.log_text();
    EXPECT_THAT(server.log_text(), HasSubstr(threads == cores ? "fp32 (batches of 8)" : "fp32 (one request per run)"))
        << threads << " threads on " << cores << " cores";
    EXPECT_THAT(server.log_text(), HasSubstr("dynamic (one request per run)"));
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log_text();
  }
}

TEST(ServeCli, SigtermAndSigintStopTheServerCleanly) {
  ScratchDir dir;
  for (int sig : {SIGTERM, SIGINT}) {
    ServerProcess server(kTinyNet.string() + kQuick, dir.path / "server.log");
    ASSERT_TRUE(server.started()) << server.log_text();
    httplib::Client c("127.0.0.1", server.port());
    const auto model = get_json(c, "/api/model");
    ASSERT_FALSE(model.is_null());
    EXPECT_EQ(model["int8"]["source"], "quantized");
    EXPECT_EQ(server.stop(sig), 0) << server.log_text();
    EXPECT_THAT(server.log_text(), HasSubstr("octet serve: stopped"));
    EXPECT_THAT(server.log_text(), Not(HasSubstr("error")));
  }
}

}  // namespace
}  // namespace octet::testing
