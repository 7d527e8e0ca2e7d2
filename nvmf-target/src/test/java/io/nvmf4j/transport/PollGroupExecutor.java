package io.nvmf4j.transport;

import java.util.ArrayDeque;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * A poll group as a queue's {@code Queue.executor()} in tests that drive a transport's state machine by hand:
 * tasks wait in {@link #tasks} until {@link #runTasks} (as they wait for the event loop's next turn); timers
 * (keep-alive, the linger after a termination) are scheduled for real on its own thread.
 */
public final class PollGroupExecutor extends ScheduledThreadPoolExecutor {
    public final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    public PollGroupExecutor() {
        super(1);
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
    }

    /** Runs the tasks waiting, and those they add, until none is left. */
    public void runTasks() {
        while (!tasks.isEmpty()) {
            runOne();
        }
    }

    /** Runs the task that waited longest. */
    public void runOne() {
        tasks.poll().run();
    }
}
