package io.nvmf4j.it;

import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tcp.socketBufferBytes}: the target's end of every connection gets that SO_SNDBUF and SO_RCVBUF, read back
 * from the kernel by {@code ss -tm} (iproute2), which shows them doubled ({@code tb}, {@code rb} of skmem). 64 KiB is
 * under any {@code net.core.wmem_max} / {@code rmem_max} (212992 by default), so the kernel's cap does not enter.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpSocketBufferTest {
    private static final Pattern SKMEM = Pattern.compile("skmem:\\(r\\d+,rb(\\d+),t\\d+,tb(\\d+),");

    @Test
    void everyConnectionOfTheTargetGetsTheConfiguredBuffers() throws Exception {
        try (TestTarget target = TestTarget.start(c -> c.tcp.socketBufferBytes = 64 * 1024);
             NvmeController c = NvmeController.open(TestTarget.ADDRESS, target.port, TestTarget.SUBNQN,
                 TestTarget.HOSTNQN, TestTarget.KATO_MS, 2, TcpHostOptions.DEFAULT)) {
            assertThat(c.io(0).read(1, 0, 8).ok()).isTrue();
            List<long[]> buffers = targetSideBuffers(target.port);
            // the admin queue and two I/O queues
            assertThat(buffers).hasSize(3);
            for (long[] b : buffers) {
                assertThat(b).as("rb, tb of a connection (the kernel doubles what was set)")
                    .containsExactly(128 * 1024, 128 * 1024);
            }
        }
    }

    /** rb and tb of each established TCP connection whose local port is {@code port}. */
    private static List<long[]> targetSideBuffers(int port) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ss", "-tmnH", "state", "established", "( sport = :" + port + " )")
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("ss: " + out).isZero();
        List<long[]> found = new ArrayList<>();
        Matcher m = SKMEM.matcher(out);
        while (m.find()) {
            found.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
        }
        return found;
    }
}
