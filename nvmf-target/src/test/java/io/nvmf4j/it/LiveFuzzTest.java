package io.nvmf4j.it;

import io.nvmf4j.fuzz.LiveFuzz;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The live network fuzzer of {@code bin/nvmf4j-fuzz} ({@link LiveFuzz}) for a few seconds against an in-process
 * target over loopback TCP: every scenario runs, the verifying host (writes, reads back and compares on the
 * restricted subsystem, a namespace the fuzzer cannot reach) sees no error, no valid ICReq or Connect goes
 * unanswered, and heap, direct memory, threads, fds and controllers come back to the baseline taken after a
 * warm-up (the event loops and pools start on first use). The seed is fresh and printed; the 10-minute run
 * against a service is in docs/testing.md ("Fuzzing").
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LiveFuzzTest {
    private static final String FUZZ_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:6e7a9b10-1f2e-4c3d-8a5b-00000000f022";

    @Test
    void aShortLiveFuzzLeavesTheVerifyingHostCleanAndNothingBehind() throws Exception {
        long seed = System.nanoTime();
        System.out.println("LiveFuzzTest: seed " + seed + " (replay: bin/nvmf4j-fuzz --seed " + seed + " ...)");
        try (TestTarget target = TestTarget.start()) {
            LiveFuzz.Options warmUp = options(target, 1, seed ^ 1);
            new LiveFuzz(warmUp).run(new PrintStream(PrintStream.nullOutputStream()));
            LiveFuzz.Probe probe = () -> {
                Soak.Sample s = Soak.sample(target);
                return new LiveFuzz.Figures(s.heapAfterGc(), s.directJdk() + s.directNetty(), s.threads(), s.fds(),
                    target.nvmf().engine().target().allControllers().size());
            };
            LiveFuzz.Options o = options(target, 4, seed);
            List<String> problems = LiveFuzz.runAndCompare(o, probe, System.out);
            assertThat(problems).as("seed %d", seed).isEmpty();
        }
    }

    private static LiveFuzz.Options options(TestTarget target, int seconds, long seed) {
        return new LiveFuzz.Options(TestTarget.ADDRESS, target.port, TestTarget.SUBNQN, FUZZ_HOSTNQN,
            TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, 1, seconds, seed, 2);
    }
}
