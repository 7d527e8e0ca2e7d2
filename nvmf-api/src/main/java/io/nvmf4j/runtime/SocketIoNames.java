package io.nvmf4j.runtime;

import java.util.List;

/**
 * The poll groups' socket I/O as the configuration names it ({@code TargetConfig.socketIo}): the kind of Netty event
 * loop the poll groups and the acceptor run on, which the validator accepts and the API's schema lists. The java
 * engine's {@code PollGroups} implements each one.
 */
public final class SocketIoNames {
    /** Netty's epoll transport (the default). */
    public static final String EPOLL = "epoll";
    /** Netty's io_uring transport; epoll where io_uring is unavailable (reported at start). */
    public static final String IO_URING = "io_uring";
    /** The JDK's NIO selector (no RDMA, no file bdev ring: they need an event loop that watches their fds). */
    public static final String NIO = "nio";
    /** Every name, in the order the documentation gives them. */
    public static final List<String> ALL = List.of(EPOLL, IO_URING, NIO);

    private SocketIoNames() {
    }

    public static boolean isValid(String name) {
        return ALL.contains(name);
    }
}
