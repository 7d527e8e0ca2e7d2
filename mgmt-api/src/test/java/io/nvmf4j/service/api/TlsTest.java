package io.nvmf4j.service.api;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** With api.tlsCert and api.tlsKey the API speaks HTTPS with that certificate. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TlsTest {
    @TempDir
    Path dir;

    @Test
    void servesHttpsWithTheGivenCertificate() throws Exception {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        int rc;
        try {
            Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                key.toString(), "-out", cert.toString(), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                "subjectAltName=IP:127.0.0.1").redirectErrorStream(true).redirectOutput(dir.resolve("openssl.log")
                .toFile()).start();
            rc = p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (java.io.IOException e) {
            rc = -1;
        }
        Assumptions.assumeTrue(rc == 0, "openssl is needed to make a test certificate");

        try (TestService t = TestService.start(dir, c -> {
            c.api.tlsCert = cert.toString();
            c.api.tlsKey = key.toString();
        })) {
            HttpClient client = Http.trusting(cert);
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                    + t.service.apiPort() + "/api/v1/bdevs"))
                .header("Authorization", "Bearer " + t.service.apiToken().value()).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(Http.parse(r.body()).get(0).get("name").asText()).isEqualTo("m0");
        }
    }
}
