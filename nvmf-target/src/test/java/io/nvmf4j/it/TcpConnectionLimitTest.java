package io.nvmf4j.it;

import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connections per TCP listener and per host address (issue 15, limits): beyond {@code tcp.maxConnectionsPerHost}
 * from one address, or {@code tcp.maxConnectionsPerListener} in all, a new connection is closed at accept with a
 * WARN line naming the limit; the connections already there carry on, and a slot that frees is used again.
 * 127.0.0.2 and 127.0.0.3 are other host addresses on the loopback device.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpConnectionLimitTest {
    static TestTarget target;
    static final CountingObserver OBSERVER = new CountingObserver();

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start(c -> {
            c.tcp.maxConnectionsPerHost = 2;
            c.tcp.maxConnectionsPerListener = 3;
            c.tcp.connectTimeoutMs = 0; // the raw connections below never send a Connect
        }, OBSERVER);
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    private static Socket connect(String from) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        s.connect(new InetSocketAddress(TestTarget.ADDRESS, target.port), 5000);
        return s;
    }

    /**
     * A connection the target has admitted: ICReq answered by ICResp (the target counts a connection when it sets
     * it up, on its poll group, so only an answer shows the order in which connections were counted).
     */
    private static Socket admitted(String from) throws IOException {
        Socket s = connect(from);
        byte[] icreq = new byte[128];
        icreq[2] = (byte) 128; // HLEN
        icreq[4] = (byte) 128; // PLEN (LE u32)
        s.getOutputStream().write(icreq);
        s.setSoTimeout(30_000); // generous: on a loaded 2-core machine a fresh JVM's first ICResp can take seconds
        byte[] icresp = s.getInputStream().readNBytes(128);
        assertThat(icresp).as("ICResp from %s", from).hasSize(128);
        assertThat(icresp[0]).as("PDU type ICResp").isEqualTo((byte) 0x01);
        return s;
    }

    /**
     * Whether the target closed {@code s} (EOF within 30 s, as generous as {@link #admitted}: the close at accept comes
     * at once, the bound only ends a wait for one that never comes) rather than keeping it (no byte, no EOF for 1 s).
     */
    private static boolean closedByTarget(Socket s, boolean expectClosed) throws IOException {
        s.setSoTimeout(expectClosed ? 30_000 : 1000);
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Test
    void connectionsBeyondThePerHostAndPerListenerLimitsAreClosedWithALogLine() throws Exception {
        List<Socket> open = new ArrayList<>();
        try (LogCapture log = new LogCapture("io.nvmf4j.transport.ConnectionLimits")) {
            open.add(admitted("127.0.0.1"));
            open.add(admitted("127.0.0.1"));
            Socket third = connect("127.0.0.1");
            assertThat(closedByTarget(third, true)).as("a third from 127.0.0.1").isTrue();
            third.close();
            assertThat(log.await("maxConnectionsPerHost 2 reached for 127.0.0.1", Duration.ofSeconds(5))
                .getFormattedMessage()).startsWith("connection from 127.0.0.1 refused: maxConnectionsPerHost 2");
            assertThat(OBSERVER.connectionsRefused("maxConnectionsPerHost")).as("counted for the metric").isEqualTo(1);

            open.add(admitted("127.0.0.2"));
            assertThat(closedByTarget(open.get(2), false)).as("127.0.0.2 is another host").isFalse();
            Socket fourth = connect("127.0.0.3");
            assertThat(closedByTarget(fourth, true)).as("a fourth on the listener").isTrue();
            fourth.close();
            log.await("maxConnectionsPerListener 3 reached", Duration.ofSeconds(5));
            assertThat(OBSERVER.connectionsRefused("maxConnectionsPerListener")).isEqualTo(1);
            for (Socket s : open.subList(0, 2)) {
                assertThat(closedByTarget(s, false)).as("the first two stay").isFalse();
            }
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
        // every slot freed: a real host connects an admin and an I/O queue from 127.0.0.1 again
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
                assertThat(c.io(0).flush(1).ok()).isTrue();
                break;
            } catch (IOException | RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }
}
