package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;

import java.util.ArrayList;
import java.util.List;

import static io.nvmf4j.it.Le.u16;
import static io.nvmf4j.it.Le.u32;
import static io.nvmf4j.it.Le.u8;
import static org.assertj.core.api.Assertions.assertThat;

/** The ANA log page (0Ch) as a host reads it, for the ANA tests of every engine. */
public final class AnaLogs {
    public static final int LID_ANA = 0x0C;
    /** Asynchronous Event Configuration bit 11: ANA change notices. */
    public static final int AEC_ANA_CHANGE = 1 << 11;
    /** AER dw0: notice (2), ANA change (03h), log page 0Ch. */
    public static final int AEN_ANA_CHANGE = 0x000C0302;
    public static final int SCT_PATH = 3;
    public static final int SC_ANA_INACCESSIBLE = 0x02;
    public static final int ANAS_OPTIMIZED = 1;
    public static final int ANAS_NON_OPTIMIZED = 2;
    public static final int ANAS_INACCESSIBLE = 3;

    private AnaLogs() {
    }

    /** The whole ANA log page: header, then descriptors with their NSID lists (RAE set). */
    public static byte[] read(NvmeHost admin, boolean groupsOnly) {
        Completion c = admin.executeRead(Sqe.of(NvmeHost.OPC_GET_LOG_PAGE).nsid(0)
            .cdw(10, LID_ANA | (groupsOnly ? 1 << 8 : 0) | (1 << 15) | ((4096 / 4 - 1) << 16)), 4096);
        assertThat(c.ok()).as("Get Log Page 0Ch: %s", c).isTrue();
        return c.data();
    }

    /** Each descriptor's (group, state, nsids...) from a log read without RGO. */
    public static List<int[]> groups(byte[] log) {
        List<int[]> out = new ArrayList<>();
        int off = 16;
        for (int i = 0; i < u16(log, 8); i++) {
            int n = (int) u32(log, off + 4);
            int[] g = new int[2 + n];
            g[0] = (int) u32(log, off);
            g[1] = u8(log, off + 16) & 0xF;
            for (int k = 0; k < n; k++) {
                g[2 + k] = (int) u32(log, off + 32 + 4 * k);
            }
            out.add(g);
            off += 32 + 4 * n;
        }
        return out;
    }
}
