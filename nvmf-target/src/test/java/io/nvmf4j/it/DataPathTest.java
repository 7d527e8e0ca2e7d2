package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/** Reads and writes of every transfer shape, with and without digests, and the other NVM commands. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DataPathTest {
    private static final int IN_CAPSULE = 8192;
    private static final int MDTS_BYTES = 128 * 1024;

    static TestTarget target;
    static NvmeController plain;
    static NvmeController digests;
    /** Each case takes its own LBA range, so cases never read each other's data. */
    static final AtomicLong nextLba = new AtomicLong(0);

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
        plain = target.controller(1, TcpHostOptions.DEFAULT);
        digests = target.controller(1, TcpHostOptions.DIGESTS);
    }

    @AfterAll
    static void stop() {
        if (plain != null) {
            plain.close();
        }
        if (digests != null) {
            digests.close();
        }
        if (target != null) {
            target.close();
        }
    }

    private static NvmeHost io(boolean withDigests) {
        return (withDigests ? digests : plain).io(0);
    }

    private static long allocate(int bytes) {
        return nextLba.getAndAdd(bytes / TestTarget.BLOCK_SIZE + 8);
    }

    static Stream<Arguments> transfers() {
        int[] sizes = {512, 4096, IN_CAPSULE, IN_CAPSULE + 512, MDTS_BYTES};
        return Stream.of(false, true).flatMap(d -> Arrays.stream(sizes).mapToObj(s -> Arguments.of(s, d)));
    }

    @ParameterizedTest(name = "{0} bytes, digests={1}")
    @MethodSource("transfers")
    void writeThenReadIsByteExact(int size, boolean withDigests) {
        NvmeHost io = io(withDigests);
        long slba = allocate(size);
        long r2tBefore = io.queue().r2tCount();
        byte[] data = Le.random(size, size * 31L + (withDigests ? 1 : 0));
        Completion w = io.write(1, slba, data);
        assertThat(w.ok()).as("write: %s", w).isTrue();
        long r2ts = io.queue().r2tCount() - r2tBefore;
        if (size <= IN_CAPSULE) {
            assertThat(r2ts).as("in-capsule write needs no R2T").isZero();
        } else {
            assertThat(r2ts).as("R2Ts for a write beyond the in-capsule size").isPositive();
        }
        Completion r = io.read(1, slba, size / TestTarget.BLOCK_SIZE);
        assertThat(r.ok()).as("read: %s", r).isTrue();
        assertThat(r.data()).as("data read back").isEqualTo(data);
        assertThat(io.queue().protocolErrors()).as("host-side protocol errors").isEmpty();
    }

    @Test
    void digestsAreNegotiated() {
        assertThat(io(true).queue().icResp().headerDigest()).isTrue();
        assertThat(io(true).queue().icResp().dataDigest()).isTrue();
        assertThat(io(false).queue().icResp().headerDigest()).isFalse();
    }

    @ParameterizedTest(name = "digests={0}")
    @ValueSource(booleans = {false, true})
    void transfersBeyondMdtsAreInvalidField(boolean withDigests) {
        NvmeHost io = io(withDigests);
        int size = MDTS_BYTES + 4096;
        long slba = allocate(size);
        assertStatus(io.write(1, slba, Le.random(size, 5)), 0, 0x02, true);
        assertStatus(io.read(1, slba, size / TestTarget.BLOCK_SIZE), 0, 0x02, true);
        TestTarget.assertWriteReadBack(io, slba, 4096, 6);
    }

    @Test
    void flushSucceeds() {
        TestTarget.assertWriteReadBack(io(false), allocate(4096), 4096, 11);
        Completion f = io(false).flush(1);
        assertThat(f.ok()).as("%s", f).isTrue();
    }

    @ParameterizedTest(name = "digests={0}")
    @ValueSource(booleans = {false, true})
    void writeZeroesReadsZeros(boolean withDigests) {
        NvmeHost io = io(withDigests);
        long slba = allocate(16384);
        TestTarget.assertWriteReadBack(io, slba, 16384, 12);
        Completion z = io.writeZeroes(1, slba + 4, 16);
        assertThat(z.ok()).as("%s", z).isTrue();
        byte[] all = io.read(1, slba, 32).data();
        assertThat(Le.allZero(Le.slice(all, 4 * 512, 16 * 512))).as("zeroed range").isTrue();
        assertThat(Le.slice(all, 0, 4 * 512)).as("before the range").isEqualTo(Le.slice(Le.random(16384, 12), 0, 4 * 512));
        assertThat(Le.slice(all, 20 * 512, 12 * 512)).as("after the range")
                .isEqualTo(Le.slice(Le.random(16384, 12), 20 * 512, 12 * 512));
    }

    @Test
    void deallocateReadsZerosOnMalloc() {
        NvmeHost io = io(false);
        long a = allocate(8192);
        long b = allocate(8192);
        TestTarget.assertWriteReadBack(io, a, 8192, 13);
        TestTarget.assertWriteReadBack(io, b, 8192, 14);
        Completion d = io.deallocate(1, new NvmeHost.Range(a, 16), new NvmeHost.Range(b, 8));
        assertThat(d.ok()).as("%s", d).isTrue();
        assertThat(Le.allZero(io.read(1, a, 16).data())).as("first range").isTrue();
        byte[] second = io.read(1, b, 16).data();
        assertThat(Le.allZero(Le.slice(second, 0, 4096))).as("second range").isTrue();
        assertThat(Le.slice(second, 4096, 4096)).as("beyond the second range")
                .isEqualTo(Le.slice(Le.random(8192, 14), 4096, 4096));
    }

    @ParameterizedTest(name = "digests={0}")
    @ValueSource(booleans = {false, true})
    void compareMatchAndMismatch(boolean withDigests) {
        NvmeHost io = io(withDigests);
        long slba = allocate(16384);
        byte[] data = Le.random(16384, 15);
        assertThat(io.write(1, slba, data).ok()).isTrue();
        Completion match = io.compare(1, slba, data);
        assertThat(match.ok()).as("compare equal: %s", match).isTrue();
        byte[] other = data.clone();
        other[9000] ^= 1;
        assertStatus(io.compare(1, slba, other), 2, 0x85, true);
        assertStatus(io.compare(1, slba + 16, Le.slice(other, 8192, 4096)), 2, 0x85, true);
        assertThat(io.compare(1, slba + 16, Le.slice(data, 8192, 4096)).ok()).as("partial compare equal").isTrue();
    }
}
