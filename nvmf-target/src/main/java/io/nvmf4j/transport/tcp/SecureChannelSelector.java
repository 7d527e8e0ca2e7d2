package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * First handler of a connection on a listener with a secure channel: its first byte tells a TLS ClientHello (record
 * type 0x16, handshake) from a plain NVMe/TCP ICReq (PDU type 0x00). TLS puts a {@link TlsServerHandler} in its place;
 * plain NVMe/TCP is let through on an {@code optional} listener and closed (logged) on a {@code required} one. Either
 * way this handler leaves the pipeline, handing on what it has read.
 */
final class SecureChannelSelector extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(SecureChannelSelector.class);
    /** TLS record content type handshake: the first byte of a ClientHello. */
    static final int TLS_HANDSHAKE = 0x16;

    private final boolean required;
    private final TlsPsks psks;

    SecureChannelSelector(boolean required, TlsPsks psks) {
        this.required = required;
        this.psks = psks;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        int first = in.getUnsignedByte(in.readerIndex());
        if (first == TLS_HANDSHAKE) {
            ctx.pipeline().replace(this, "tls", new TlsServerHandler(psks));
        } else if (required) {
            LOG.warn("connection from {}: plain NVMe/TCP (first byte 0x{}) on a listener that requires TLS; closing",
                TcpQueue.hostPort(ctx.channel().remoteAddress()), Integer.toHexString(first));
            in.skipBytes(in.readableBytes());
            ctx.close();
        } else {
            ctx.pipeline().remove(this);
        }
    }
}
