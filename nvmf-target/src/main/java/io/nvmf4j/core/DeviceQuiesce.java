package io.nvmf4j.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The wait for a lost controller's commands on its devices (teardown, or CC.EN cleared): polls the controller's
 * count of device commands every {@value #POLL_MICROS} us on a poll-group thread (never blocking it) and calls
 * back once it is zero, or once the Command Quiesce Time has passed. A command that outlives the bound is logged
 * (ERROR: the bound Identify advertises did not hold) and left to finish on its device, which ends it by its own
 * bound (an rbd bdev's OSD op timeout, kept below the CQT by the validator; the file bdev's kernel I/O); the
 * callback then runs all the same, so the cntlid and a waiting reconnect are never held past the bound.
 */
final class DeviceQuiesce implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceQuiesce.class);
    private static final long POLL_MICROS = 500;

    private final Controller controller;
    private final String reason;
    private final Consumer<DeviceQuiesce> done;
    private ScheduledExecutorService executor;
    private long startNanos;
    private long deadlineNanos;

    DeviceQuiesce(Controller controller, String reason, Consumer<DeviceQuiesce> done) {
        this.controller = controller;
        this.reason = reason;
        this.done = done;
    }

    /** Starts the wait on {@code executor}; ends at once when no command is on a device or the executor stopped. */
    void start(ScheduledExecutorService executor) {
        this.executor = executor;
        this.startNanos = System.nanoTime();
        this.deadlineNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(controller.quiesceTimeMs());
        if (controller.deviceCommands() == 0) {
            done.accept(this);
            return;
        }
        LOG.info("{}: {}: waiting up to {} ms (Command Quiesce Time) for {} command(s) on its devices", controller,
            reason, controller.quiesceTimeMs(), controller.deviceCommands());
        schedule();
    }

    private void schedule() {
        try {
            executor.schedule(this, POLL_MICROS, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            // the poll group stopped (the target is closing): its queues and their commands go with it
            done.accept(this);
        }
    }

    @Override
    public void run() {
        long left = controller.deviceCommands();
        long now = System.nanoTime();
        if (left == 0) {
            LOG.info("{}: its device commands ended {} ms after the {}", controller,
                TimeUnit.NANOSECONDS.toMillis(now - startNanos), reason);
            done.accept(this);
        } else if (now - deadlineNanos >= 0) {
            LOG.error("{}: {} command(s) still on its devices {} ms after the {} (Command Quiesce Time exceeded): the "
                + "controller is released; a host retrying them on another path may race them", controller, left,
                controller.quiesceTimeMs(), reason);
            done.accept(this);
        } else {
            schedule();
        }
    }
}
