package io.nvmf4j.runtime;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.ThreadAwareExecutor;

/**
 * An idle strategy ({@link IdleStrategies}) around an {@link IoHandler} that takes no {@link SelectStrategy}: Netty's
 * io_uring handler. Each pass of the event loop first runs the handler without blocking (it submits what is queued
 * and handles the completions there are: the strategy's "select now"), then lets the strategy decide as on epoll:
 * work found, or a spinning strategy, ends the pass; {@link SelectStrategy#SELECT} runs the handler once more with
 * the loop's own context, in which it blocks in {@code io_uring_enter} until a completion, a task or the next timer.
 * The strategy's pollers (RDMA CQs, the file bdev's rings) are polled on every pass and armed before blocking, as
 * on epoll. The non-blocking run is skipped when {@link IoUringPeek} finds nothing for it to do (it would return 0
 * having done nothing but allocate, in Netty 4.2.18).
 *
 * <p>Owning thread: the event loop's, which alone calls {@link #run}; the rest is the delegate's.
 */
final class IdleIoHandler implements IoHandler {
    private final IoHandler delegate;
    private final SelectStrategy strategy;
    /** The loop's context of the pass in progress, for the timers of the non-blocking run. */
    private IoHandlerContext pass;
    /** The loop's context with blocking forbidden: the strategy's "select now". */
    private final IoHandlerContext nonBlocking = new IoHandlerContext() {
        @Override
        public boolean canBlock() {
            return false;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return pass.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return pass.deadlineNanos();
        }
    };
    private final IntSupplier runNow;

    private IdleIoHandler(IoHandler delegate, SelectStrategy strategy) {
        this.delegate = delegate;
        this.strategy = strategy;
        IoUringPeek peek = IoUringPeek.of(delegate);
        this.runNow = peek == null ? () -> delegate.run(nonBlocking)
            : () -> peek.hasWork() ? delegate.run(nonBlocking) : 0;
    }

    /** Handlers of {@code handlers}, each with a strategy of {@code strategies}. */
    static IoHandlerFactory factory(IoHandlerFactory handlers, SelectStrategyFactory strategies) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                return new IdleIoHandler(handlers.newHandler(executor), strategies.newSelectStrategy());
            }

            @Override
            public boolean isChangingThreadSupported() {
                return handlers.isChangingThreadSupported();
            }
        };
    }

    @Override
    public int run(IoHandlerContext context) {
        pass = context;
        try {
            int s = strategy.calculateStrategy(runNow, !context.canBlock());
            if (s == SelectStrategy.SELECT) {
                return delegate.run(context);
            }
            return Math.max(s, 0);
        } catch (Exception e) {
            // the strategies throw nothing checked (their "select now" is this handler's run)
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
    }

    @Override
    public void initialize() {
        delegate.initialize();
    }

    @Override
    public void prepareToDestroy() {
        delegate.prepareToDestroy();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        return delegate.register(handle);
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return delegate.isCompatible(handleType);
    }
}
