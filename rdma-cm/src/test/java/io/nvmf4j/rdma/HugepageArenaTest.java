package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

class HugepageArenaTest {

    @Test
    void normalPagesWhenNotAsked() {
        try (HugepageArena a = HugepageArena.allocate(10_000, false)) {
            assertThat(a.isHugepageBacked()).isFalse();
            assertThat(a.fallbackReason()).isNull();
            assertThat(a.size()).isEqualTo(10_000);
            assertThat(a.mappedLength()).isEqualTo(12_288);
            assertThat(a.address()).isNotZero();
            a.buffer().putLong(0, 0x0123456789abcdefL).put(9_999, (byte) 7);
            assertThat(a.buffer().getLong(0)).isEqualTo(0x0123456789abcdefL);
            assertThat(a.buffer().get(9_999)).isEqualTo((byte) 7);
            assertThat(a.buffer().get(5_000)).isZero();
        }
    }

    /** With no hugepages configured, asking for them falls back to normal pages and says why. */
    @Test
    void fallsBackWhenNoHugepagesAreConfigured() throws IOException {
        assumeTrue(freeHugepages() == 0, "this host has free hugepages");
        try (HugepageArena a = HugepageArena.allocate(3 << 20, true)) {
            assertThat(a.isHugepageBacked()).isFalse();
            assertThat(a.fallbackReason()).startsWith("mmap(MAP_HUGETLB) of 4194304 bytes failed: ")
                    .endsWith("(vm.nr_hugepages=" + HugepageArena.nrHugepages() + ")");
            assertThat(a.mappedLength()).isEqualTo(3 << 20);
            a.buffer().put((3 << 20) - 1, (byte) 1);
        }
    }

    /** Runs where an administrator reserved hugepages (echo 2 > /proc/sys/vm/nr_hugepages). */
    @Test
    void usesHugepagesWhenFree() throws IOException {
        long hugePage = HugepageArena.defaultHugePageSize();
        assumeTrue(hugePage > 0 && freeHugepages() >= 1, "no free hugepages");
        try (HugepageArena a = HugepageArena.allocate(hugePage, true)) {
            assertThat(a.isHugepageBacked()).isTrue();
            assertThat(a.fallbackReason()).isNull();
            assertThat(a.mappedLength()).isEqualTo(hugePage);
            assertThat(a.address() % hugePage).isZero();
        }
    }

    @Test
    void rejectsSizesABufferCannotHold() {
        assertThatThrownBy(() -> HugepageArena.allocate(0, false)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HugepageArena.allocate(1L << 31, false)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void closeIsIdempotent() {
        HugepageArena a = HugepageArena.allocate(4096, false);
        a.close();
        a.close();
    }

    private static long freeHugepages() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/meminfo"))) {
            if (line.startsWith("HugePages_Free:")) {
                return Long.parseLong(line.substring(15).trim());
            }
        }
        return 0;
    }
}
