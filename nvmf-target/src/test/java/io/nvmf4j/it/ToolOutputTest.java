package io.nvmf4j.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ToolOutput}: a child's output read as a stream, kept within its bound whatever its length. */
class ToolOutputTest {
    /** More than the test JVM's whole heap (-Xmx1g): read whole into a String, this output ends the JVM. */
    private static final long HUGE = 3L << 29;

    @Test
    void shortOutputIsKeptWholeWithItsLinesCounted() {
        ToolOutput out = new ToolOutput(l -> l.startsWith("keep"))
            .consume(new ByteArrayInputStream("one\nkeep 1\n\nkeep 2".getBytes(StandardCharsets.UTF_8)));
        assertThat(out.whole()).isTrue();
        assertThat(out.text()).isEqualTo("one\nkeep 1\n\nkeep 2");
        assertThat(out.bytes()).isEqualTo(18);
        assertThat(out.lines()).isEqualTo(4);
        assertThat(out.keptLines()).containsExactly("keep 1", "keep 2");
    }

    @Test
    void outputJustAboveTheBoundKeepsItsBeginningAndEnd() {
        byte[] b = new byte[2 * ToolOutput.EDGE_BYTES + 10];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + i % 26);
        }
        ToolOutput out = new ToolOutput().consume(new ByteArrayInputStream(b));
        String all = new String(b, StandardCharsets.US_ASCII);
        assertThat(out.whole()).isFalse();
        assertThat(out.text()).startsWith(all.substring(0, ToolOutput.EDGE_BYTES))
            .contains("[... 10 bytes of " + b.length + " left out ...]")
            .endsWith(all.substring(all.length() - ToolOutput.EDGE_BYTES));
        assertThat(out.lines()).isEqualTo(1);
    }

    /**
     * A tool printing 1.5 GiB of short lines, as SPDK's nvme_fuzz prints a JSON block per command, with summary lines
     * in its middle and at its end: the run finishes, every byte is counted, the summary lines are kept whole and the
     * text stays within its bound.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void outputLargerThanTheHeapIsStreamedAndSummarised() throws Exception {
        String jsonLine = "{\"opc\": 2, \"nsid\": 1, \"cdw10\": 4096, \"cdw11\": 0}";
        long half = HUGE / 2 / (jsonLine.length() + 1);
        String script = "echo start; yes '" + jsonLine + "' | head -n " + half + "; echo 'Total commands completed: 7';"
            + " yes '" + jsonLine + "' | head -n " + half + "; echo 'Total commands completed: 11'; printf end; exit 3";
        ToolOutput.Finished f = ToolOutput.run(List.of("sh", "-c", script), 600,
            l -> l.startsWith("Total commands completed"));
        assertThat(f.timedOut()).isFalse();
        assertThat(f.exitCode()).isEqualTo(3);
        ToolOutput out = f.output();
        long expected = "start\n".length() + 2 * half * (jsonLine.length() + 1)
            + "Total commands completed: 7\n".length() + "Total commands completed: 11\n".length() + "end".length();
        assertThat(out.bytes()).isEqualTo(expected).isGreaterThan(Runtime.getRuntime().maxMemory());
        assertThat(out.lines()).isEqualTo(2 * half + 4);
        assertThat(out.keptLines()).containsExactly("Total commands completed: 7", "Total commands completed: 11");
        assertThat(out.text()).startsWith("start\n" + jsonLine).endsWith("Total commands completed: 11\nend")
            .hasSizeLessThan(2 * ToolOutput.EDGE_BYTES + 100);
    }
}
