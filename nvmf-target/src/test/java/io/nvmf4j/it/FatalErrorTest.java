package io.nvmf4j.it;

import io.nvmf4j.runtime.FatalErrors;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An Error thrown on a poll group's thread while it serves a connection (a device out of memory) is caught by Netty's
 * pipeline, not by the thread: it must still reach the process's uncaught-exception handler (the service's stops the
 * process with one line and status 3), from a thread of its own so the stop does not wait for the poll group.
 */
class FatalErrorTest {
    private Thread.UncaughtExceptionHandler before;
    private final CompletableFuture<Object[]> handled = new CompletableFuture<>();

    @BeforeEach
    void recordTheProcessHandler() {
        before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> handled.complete(new Object[] {t.getName(), e,
            Thread.currentThread().getName()}));
    }

    @AfterEach
    void restore() {
        Thread.setDefaultUncaughtExceptionHandler(before);
    }

    @Test
    void anErrorOnAPollThreadReachesTheProcessHandlerFromAThreadOfItsOwn() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        OutOfMemoryError oom = new OutOfMemoryError("Java heap space (thrown by the test's device)");
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            assertThat(c.io(0).execute(io.nvmf4j.testhost.Sqe.of(NvmeHost.OPC_FLUSH).nsid(1)).ok()).as("a flush before the device fails").isTrue();
            dev.failFlushesWith(oom);  // a command without data: nothing is left unreleased by the error
            c.io(0).queue().submit(io.nvmf4j.testhost.Sqe.of(NvmeHost.OPC_FLUSH).nsid(1), null, 0);
            Object[] got = handled.get(30, TimeUnit.SECONDS);
            assertThat(got[1]).as("the error the handler got").isSameAs(oom);
            assertThat((String) got[0]).as("the thread it was raised on: a poll group's").startsWith("nvmf4j-poll");
            assertThat((String) got[2]).as("the thread the handler runs on").isEqualTo(FatalErrors.THREAD);
        }
    }

    @Test
    void anythingButAnErrorIsLeftToTheCaller() {
        assertThat(FatalErrors.raise(new IllegalStateException("not fatal"))).isFalse();
        assertThat(FatalErrors.raise(null)).isFalse();
        assertThat(FatalErrors.raise(newOutOfDirectMemory())).as("Netty's own direct-memory bound").isFalse();
        assertThat(handled).as("the process handler was not called").isNotDone();
    }

    /** Netty's error for its direct-memory bound (its constructor is not public). */
    private static Error newOutOfDirectMemory() {
        try {
            var c = io.netty.util.internal.OutOfDirectMemoryError.class.getDeclaredConstructor(String.class);
            c.setAccessible(true);
            return c.newInstance("failed to allocate 16777216 byte(s) of direct memory (the test's)");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
