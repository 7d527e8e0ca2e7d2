package io.nvmf4j.fuzz;

import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * A property checked on a fixed number of tries inside one JUnit test, each try's input generated from a seed
 * of its own: try {@code i} of base seed {@code B} has the seed {@link #seed(long, long) seed(B, i)}, so the
 * whole check replays from {@code B} and one try from its seed. The first try that fails ends the check with an
 * {@link AssertionError} naming the property, the try, both seeds, the input and, where the caller gave one, the
 * command that replays that try; the failure is its cause. Inputs are not shrunk.
 *
 * <pre>
 * Tries.of("tcpPdusNeverEscape", 4420, 3000).replay(s -&gt; "./dev.sh fuzz --replay tcp-pdu:" + s).forEachSeed(tcp::run);
 * Tries.of("behavesLikeAMap", 4791, 300).forAll(Ops::generate, QpTableTest::check);
 * </pre>
 */
public final class Tries {
    private final String property;
    private final long base;
    private final int tries;
    private final LongFunction<String> replay;

    private Tries(String property, long base, int tries, LongFunction<String> replay) {
        if (tries < 1) {
            throw new IllegalArgumentException("tries " + tries);
        }
        this.property = property;
        this.base = base;
        this.tries = tries;
        this.replay = replay;
    }

    /** {@code tries} tries of {@code property} from the base seed {@code base}. */
    public static Tries of(String property, long base, int tries) {
        return new Tries(property, base, tries, null);
    }

    /** The same tries; a failure also prints {@code command} of the failing try's seed (how to replay it alone). */
    public Tries replay(LongFunction<String> command) {
        return new Tries(property, base, tries, command);
    }

    /**
     * The seed of try (or case) {@code i} from {@code base}: SplitMix64 of the pair, independent and cheap. The
     * long fuzz runs derive their cases' seeds the same way.
     */
    public static long seed(long base, long i) {
        return new SplittableRandom(base ^ (i * 0x9E3779B97F4A7C15L)).nextLong();
    }

    /** Checks {@code check} on each try's seed itself (for a property that builds its case from a seed). */
    public void forEachSeed(LongConsumer check) {
        run(s -> s, check::accept);
    }

    /** Checks {@code check} on the input {@code generator} draws from each try's seed. */
    public <T> void forAll(Function<SplittableRandom, T> generator, Consumer<? super T> check) {
        run(s -> generator.apply(new SplittableRandom(s)), check);
    }

    private <T> void run(LongFunction<T> input, Consumer<? super T> check) {
        for (int i = 0; i < tries; i++) {
            long s = seed(base, i);
            T in = input.apply(s);
            try {
                check.accept(in);
            } catch (Throwable e) {
                throw new AssertionError(failure(i, s, in, e), e);
            }
        }
    }

    private String failure(int i, long s, Object in, Throwable e) {
        StringBuilder b = new StringBuilder()
            .append("property ").append(property).append(" failed on try ").append(i + 1).append(" of ").append(tries)
            .append(" (base seed ").append(base).append(", try seed ").append(s).append(")")
            .append("\n  input: ").append(in);
        if (replay != null) {
            b.append("\n  replay: ").append(replay.apply(s));
        }
        return b.append("\n  failure: ").append(e).toString();
    }
}
