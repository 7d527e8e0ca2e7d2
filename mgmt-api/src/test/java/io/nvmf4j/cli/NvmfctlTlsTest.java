package io.nvmf4j.cli;

import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.service.api.TestService;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Against an HTTPS API with a self-signed certificate: refused (exit 3) unless trusted with --cacert, or --insecure. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmfctlTlsTest {
    @TempDir
    Path dir;

    @Test
    void selfSignedCertificateNeedsCacertOrInsecure() throws Exception {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        int rc;
        try {
            Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(), "-out", cert.toString(),
                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")
                .redirectErrorStream(true).redirectOutput(dir.resolve("openssl.log").toFile()).start();
            rc = p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            rc = -1;
        }
        Assumptions.assumeTrue(rc == 0, "openssl is needed to make a test certificate");

        try (TestService t = TestService.start(dir.resolve("state"), c -> {
            c.api.tlsCert = cert.toString();
            c.api.tlsKey = key.toString();
        })) {
            String url = "https://127.0.0.1:" + t.service.apiPort();
            Cli cli = new Cli(Map.of(), "--url", url, "--state-dir", t.dir.toString());
            Run refused = cli.run("bdev", "list");
            assertThat(refused.code()).as("%s", refused).isEqualTo(3);
            assertThat(refused.err()).isEqualTo("nvmfctl: cannot connect to " + url + ": the certificate is not "
                + "trusted (trust its certificate with --cacert FILE; --insecure skips the check, for tests only)\n");

            Run ok = cli.run("--insecure", "bdev", "list");
            assertThat(ok.code()).as("%s", ok).isZero();
            assertThat(ok.out()).contains("\nm0    malloc");

            // --cacert trusts that certificate and still checks the host name (its SAN is IP:127.0.0.1)
            Run trusted = cli.run("bdev", "list", "--cacert", cert.toString());
            assertThat(trusted.code()).as("%s", trusted).isZero();
            assertThat(trusted.out()).contains("\nm0    malloc");
            Run otherName = new Cli(Map.of(), "--url", "https://localhost:" + t.service.apiPort(), "--state-dir",
                t.dir.toString(), "--cacert", cert.toString()).run("bdev", "list");
            assertThat(otherName.code()).as("%s", otherName).isEqualTo(3);
            assertThat(otherName.err()).startsWith("nvmfctl: cannot connect to https://localhost:");

            Run notPem = cli.run("--cacert", key.getParent().resolve("openssl.log").toString(), "bdev", "list");
            assertThat(notPem.code()).as("%s", notPem).isEqualTo(2);
            assertThat(notPem.err()).isEqualTo("nvmfctl: --cacert " + dir.resolve("openssl.log")
                + ": cannot read a PEM certificate from it\n");
            Run absent = cli.run("--cacert", dir.resolve("absent.pem").toString(), "bdev", "list");
            assertThat(absent.err()).isEqualTo("nvmfctl: --cacert " + dir.resolve("absent.pem") + ": no such file\n");
            assertThat(cli.run("--cacert", cert.toString(), "--insecure", "bdev", "list").err())
                .isEqualTo("nvmfctl: --insecure and --cacert exclude each other\n");
        }
    }
}
