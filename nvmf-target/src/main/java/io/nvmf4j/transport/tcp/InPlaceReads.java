package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * The receive buffers of one NVMe/TCP connection: while the queue awaits the data of an H2CData PDU and
 * nothing else is buffered, the socket reads straight into the request's data buffer (a slice of it from
 * {@link TcpPduReader#inPlaceTarget()}), so write data is copied once, by the kernel, instead of into Netty's
 * cumulation buffer and again into the request. When a read ended inside a PDU, the next buffer starts with
 * the bytes of that PDU already read ({@link TcpPduReader#carryTarget}), so what the socket reads after them
 * is not copied again to join them. At a PDU boundary with nothing buffered, while a write of 64 KiB or more
 * awaits its H2CData, the socket reads an H2CData header's length alone ({@link TcpPduReader#headerReadSize()}),
 * so that the data after it is read in place whole instead of partly into a receive buffer and copied.
 * Otherwise the channel's usual allocator decides.
 *
 * <p>Netty's epoll channel reads again while a read fills its buffer, so a slice sized to exactly the data
 * left ends the in-place reads at the PDU's end; the next read (digest, next PDU) gets an ordinary buffer. Its
 * io_uring channel ({@code socketIo io_uring}) asks for each buffer when it submits the receive: the first of a
 * read loop once a poll has said the socket is readable, each next one after the last was decoded, so the
 * buffer is chosen from the same state as on epoll.
 */
final class InPlaceReads implements RecvByteBufAllocator {
    private final TcpPduReader queue;
    private final RecvByteBufAllocator delegate;

    InPlaceReads(TcpPduReader queue, RecvByteBufAllocator delegate) {
        this.queue = queue;
        this.delegate = delegate;
    }

    @Override
    public Handle newHandle() {
        return new InPlaceHandle(queue, (ExtendedHandle) delegate.newHandle());
    }

    /** Every method but {@link #allocate} is the delegate's (it also counts the in-place reads' bytes). */
    private static final class InPlaceHandle implements ExtendedHandle {
        private final TcpPduReader queue;
        private final ExtendedHandle delegate;

        InPlaceHandle(TcpPduReader queue, ExtendedHandle delegate) {
            this.queue = queue;
            this.delegate = delegate;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = queue.inPlaceTarget();
            if (target == null) {
                target = queue.carryTarget(alloc, delegate.guess());
            }
            if (target == null) {
                int header = queue.headerReadSize();
                if (header > 0) {
                    TcpQueue.HEADER_READS.incrementAndGet();
                    target = alloc.ioBuffer(header, header);
                }
            }
            return target != null ? target : delegate.allocate(alloc);
        }

        @Override
        public int guess() {
            return delegate.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            delegate.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            delegate.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return delegate.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return delegate.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return delegate.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            delegate.readComplete();
        }
    }
}
