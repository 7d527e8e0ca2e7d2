package io.nvmf4j.it;

import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A discovery log page beyond one 4 KiB transfer, read the way a host reads it (libnvme's nvme_get_discovery_log):
 * the header for GENCTR and NUMREC, the records in 4 KiB pieces at growing offsets (LPOL/LPOU), the header again,
 * and everything once more when GENCTR moved in between. Offsets that are not dword aligned or lie beyond the page
 * are Invalid Field.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DiscoveryLogPagingTest {
    private static final int LID_DISCOVERY = 0x70;
    private static final int ENTRY_SIZE = 1024;
    private static final int PIECE = 4096;
    private static final int REFERRALS = 12;
    private static final int AEC_DISCOVERY = 1 << 31;

    @Test
    void aLogOfManyRecordsReadsInPiecesAndAChangeBetweenPiecesMovesGenctr() throws Exception {
        try (TestTarget t = TestTarget.start()) {
            for (int i = 0; i < REFERRALS; i++) {
                t.nvmf().addReferral(new ReferralConfig("tcp", "10.0.1." + (i + 1), 8009));
            }
            try (NvmeController d = t.discovery(TestTarget.HOSTNQN)) {
                NvmeHost admin = d.admin();
                byte[] whole = wholeInOneRead(admin);
                long numrec = Le.u64(whole, 8);
                assertThat((numrec + 1) * ENTRY_SIZE).as("page size").isGreaterThan(3L * PIECE);

                byte[] pieces = inPieces(admin, numrec);
                assertThat(pieces).as("the page read in 4 KiB pieces").isEqualTo(whole);

                // a change between two pieces: the host sees GENCTR move and reads again
                assertThat(admin.setFeatures(0x0B, AEC_DISCOVERY).ok()).isTrue();
                CompletableFuture<Completion> aer = admin.asyncEventRequest();
                long genctr = Le.u64(page(admin, 0, PIECE), 0);
                byte[] firstPiece = page(admin, 0, PIECE);
                t.nvmf().addReferral(new ReferralConfig("tcp", "10.0.2.1", 8009));
                byte[] secondPiece = page(admin, PIECE, PIECE);
                long after = Le.u64(page(admin, 0, 16), 0);
                assertThat(after).as("GENCTR after a change between pieces").isGreaterThan(genctr);
                assertThat(Le.u64(firstPiece, 0)).isEqualTo(genctr);
                assertThat((aer.get(10, TimeUnit.SECONDS).dw0() >>> 16) & 0xFF).as("the discovery change event")
                    .isEqualTo(LID_DISCOVERY);
                byte[] again = wholeInOneRead(admin);
                assertThat(Le.u64(again, 0)).isEqualTo(after);
                assertThat(Le.u64(again, 8)).as("NUMREC after the change").isEqualTo(numrec + 1);
                assertThat(inPieces(admin, numrec + 1)).isEqualTo(again);
                assertThat(Arrays.copyOfRange(secondPiece, 0, PIECE)).as("a piece of the page as it is now")
                    .isEqualTo(Arrays.copyOfRange(again, PIECE, 2 * PIECE));

                int size = (int) (numrec + 2) * ENTRY_SIZE;
                assertThat(page(admin, size, PIECE)).as("at the page's end: nothing left, zeros").containsOnly(0);
                assertInvalidField(admin.getLogPage(LID_DISCOVERY, 0, size + 4, PIECE), "beyond the page");
                assertInvalidField(admin.getLogPage(LID_DISCOVERY, 0, 1L << 32, PIECE), "LPOU beyond the page");
                assertInvalidField(admin.getLogPage(LID_DISCOVERY, 0, 2, PIECE), "not dword aligned");
                assertThat(admin.keepAlive().ok()).as("the controller serves on").isTrue();
            }
        }
    }

    private static byte[] wholeInOneRead(NvmeHost admin) {
        long numrec = Le.u64(page(admin, 0, 16), 8);
        return page(admin, 0, (int) (numrec + 1) * ENTRY_SIZE);
    }

    /** Header, records in 4 KiB pieces, header again; GENCTR must not have moved in between. */
    private static byte[] inPieces(NvmeHost admin, long numrec) {
        int size = (int) (numrec + 1) * ENTRY_SIZE;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (long off = 0; off < size; off += PIECE) {
            out.writeBytes(page(admin, off, (int) Math.min(PIECE, size - off)));
        }
        byte[] log = out.toByteArray();
        assertThat(Le.u64(page(admin, 0, 16), 0)).as("GENCTR unchanged while reading").isEqualTo(Le.u64(log, 0));
        return log;
    }

    private static byte[] page(NvmeHost admin, long offset, int length) {
        Completion c = admin.getLogPage(LID_DISCOVERY, 0, offset, length);
        assertThat(c.ok()).as("offset %d length %d: %s", offset, length, c).isTrue();
        return c.data();
    }

    private static void assertInvalidField(Completion c, String what) {
        assertThat(c.sct()).as("%s: %s", what, c).isZero();
        assertThat(c.sc()).as("%s: %s", what, c).isEqualTo(0x02);
    }
}
