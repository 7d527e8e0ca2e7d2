package io.nvmf4j.spdk;

import io.nvmf4j.it.Le;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeHost;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Data-path checks shared by the engine tests, and reading SPDK's tools' output. */
final class TestData {
    private TestData() {
    }

    /** Writes {@code bytes} of seeded random data at {@code slba} of {@code nsid}, reads it back and compares. */
    static void assertWriteReadBack(NvmeHost io, int nsid, long slba, int bytes, long seed) {
        byte[] data = Le.random(bytes, seed);
        Completion w = io.write(nsid, slba, data);
        assertThat(w.ok()).as("write %d B at LBA %d of nsid %d: %s", bytes, slba, nsid, w).isTrue();
        Completion r = io.read(nsid, slba, bytes / io.blockSize());
        assertThat(r.ok()).as("read %d B at LBA %d of nsid %d: %s", bytes, slba, nsid, r).isTrue();
        assertThat(r.data()).as("data read back at LBA %d of nsid %d", slba, nsid).isEqualTo(data);
    }

    /**
     * The figures of bdevperf's {@code Total} lines ({@code Total : IOPS MiB/s Fail/s TO/s average min max}), one
     * array each: IOPS, MiB/s, failed/s, timed out/s.
     */
    static List<double[]> bdevperfTotals(String output) {
        List<double[]> out = new ArrayList<>();
        for (String line : output.split("\n")) {
            String t = line.replace("\r", "").trim();
            if (!t.startsWith("Total") || t.indexOf(':') < 0) {
                continue;
            }
            String[] f = t.substring(t.indexOf(':') + 1).trim().split("\\s+");
            if (f.length >= 4) {
                out.add(new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2]),
                    Double.parseDouble(f[3])});
            }
        }
        return out;
    }
}
