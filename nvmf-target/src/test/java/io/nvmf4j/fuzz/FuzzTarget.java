package io.nvmf4j.fuzz;

/**
 * One parser under fuzz. {@link #run(long)} builds a case from its seed (a valid input, mutated by
 * {@link Mutator}), feeds it to the real parser and checks the outcome; anything wrong is an {@link Escape}.
 * A target is used by one thread.
 */
public interface FuzzTarget extends AutoCloseable {
    String name();

    /** Runs the case of {@code seed}; throws {@link Escape} (or anything else) when the property fails. */
    void run(long seed);

    /** After rejections, the same target still serves a valid command (checked now and then and at the end). */
    default void checkStillServes() {
    }

    @Override
    default void close() {
    }
}
