package io.nvmf4j.service.state;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Deque;

/** The inverse control calls of the steps done so far, run newest first to take them all back. */
final class Undo {
    private static final Logger LOG = LoggerFactory.getLogger(Undo.class);

    private final Deque<Runnable> steps = new ArrayDeque<>();

    /** Records the inverse of a step that has just succeeded. */
    void push(Runnable inverse) {
        steps.push(inverse);
    }

    /** Runs every recorded inverse, newest first; a failing one is logged and the rest still run. */
    void runAll() {
        while (!steps.isEmpty()) {
            try {
                steps.pop().run();
            } catch (RuntimeException e) {
                LOG.error("undoing a configuration step failed; the live target may differ from the file", e);
            }
        }
    }
}
