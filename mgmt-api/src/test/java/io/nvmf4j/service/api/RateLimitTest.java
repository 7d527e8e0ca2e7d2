package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The API's per-client request rate (issue 15, limits): beyond {@code api.requestBurst} requests at once and
 * {@code api.requestsPerSecond} after, a client gets 429 with Retry-After and a JSON message; another client
 * address (127.0.0.2, also loopback) is not affected, and the first is served again once its bucket refills.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RateLimitTest {
    @TempDir
    static Path dir;
    private static TestService t;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> {
            c.api.requestsPerSecond = 2;
            c.api.requestBurst = 3;
        });
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    /** One GET of the bdev list from {@code source}: the status line's code, the Retry-After header, the body. */
    private static String[] get(String source) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), t.service.apiPort()), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /api/v1/bdevs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                + t.service.apiToken().value() + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            String status = answer.substring(9, 12);
            String retry = null;
            for (String line : answer.substring(0, answer.indexOf("\r\n\r\n")).split("\r\n")) {
                if (line.regionMatches(true, 0, "Retry-After:", 0, 12)) {
                    retry = line.substring(12).trim();
                }
            }
            return new String[] {status, retry, answer.substring(answer.indexOf("\r\n\r\n") + 4)};
        }
    }

    @Test
    void aClientBeyondItsRateGets429WithRetryAfterAndOthersCarryOn() throws Exception {
        int ok = 0;
        String[] refused = null;
        long start = System.nanoTime();
        for (int i = 0; i < 50 && refused == null; i++) {
            String[] r = get("127.0.0.1");
            if (r[0].equals("200")) {
                ok++;
            } else {
                refused = r;
            }
        }
        // the bucket refills while the requests go out, and how many refills that is depends on their speed
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(refused).as("refused within 50 requests").isNotNull();
        assertThat(ok).as("the burst (3) and the refills (2/s) of %d ms", millis)
            .isBetween(3, 3 + (int) (millis * 2 / 1000));
        assertThat(refused[0]).isEqualTo("429");
        assertThat(Long.parseLong(refused[1])).as("Retry-After").isBetween(1L, 2L);
        JsonNode body = Http.parse(refused[2]);
        assertThat(body.get("error").asText()).startsWith("too many requests from this client: "
            + "api.requestsPerSecond is 2 (burst 3); retry after");

        assertThat(get("127.0.0.2")[0]).as("another client address").isEqualTo("200");
        Thread.sleep(1000L * Long.parseLong(refused[1]));
        assertThat(get("127.0.0.1")[0]).as("after Retry-After").isEqualTo("200");
    }

    @Test
    void theBucketRefillsAtTheRateAndNeverBeyondTheBurst() {
        AtomicLong now = new AtomicLong(0);
        RateLimiter l = new RateLimiter(4, 2, now::get);
        assertThat(l.take("a")).isZero();
        assertThat(l.take("a")).isZero();
        assertThat(l.take("a")).as("empty: wait 1 s (rounded up)").isEqualTo(1);
        assertThat(l.take("b")).as("another client").isZero();
        now.addAndGet(250_000_000L);
        assertThat(l.take("a")).as("a quarter second later: one token at 4/s").isZero();
        assertThat(l.take("a")).isEqualTo(1);
        now.addAndGet(60_000_000_000L);
        assertThat(l.take("a")).isZero();
        assertThat(l.take("a")).isZero();
        assertThat(l.take("a")).as("a long pause refills to the burst only").isEqualTo(1);
    }
}
