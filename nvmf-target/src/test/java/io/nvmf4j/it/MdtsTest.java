package io.nvmf4j.it;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Identify's MDTS over loopback TCP: the power of two of 4 KiB pages (CAP.MPSMIN), whose 0 means "no limit". The
 * smallest transfer size it can report is two pages (MDTS 1); one page cannot be said, so tcp.mdtsBytes 4096 is
 * refused at start instead of being advertised as unlimited.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MdtsTest {
    @Test
    void eightKibIsMdtsOneAndALargerTransferIsRefused() throws Exception {
        try (TestTarget target = TestTarget.start(c -> c.tcp.mdtsBytes = 8192);
             NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            byte[] id = c.admin().identify(1, 0, 0).data();
            assertThat(Le.u8(id, 77)).as("MDTS: 2^1 pages of 4 KiB").isEqualTo(1);
            assertThat(c.io(0).read(1, 0, 8192 / TestTarget.BLOCK_SIZE).ok()).as("a read of MDTS bytes").isTrue();
            Completion over = c.io(0).read(1, 0, 16384 / TestTarget.BLOCK_SIZE);
            assertThat(over.ok()).as("a read above MDTS: %s", over).isFalse();
            assertThat(over.sc()).isEqualTo(NvmeStatus.INVALID_FIELD & 0xFF);
        }
    }

    @Test
    void onePageIsRefusedAtStartNotAdvertisedAsUnlimited() {
        assertThatThrownBy(() -> TestTarget.start(c -> c.tcp.mdtsBytes = 4096).close())
            .isInstanceOf(ConfigException.class).hasMessageContaining("tcp.mdtsBytes")
            .hasMessageContaining("one page cannot be reported");
    }
}
