package io.nvmf4j.engine;

/**
 * A completed I/O command as an engine's data path reports it to an {@link IoObserver}: where it came from and what
 * it was. The engine reuses the object for the next command: read it during the call, never keep it.
 */
public interface IoCommand {
    /** The namespace it addressed, or null when it named none that exists. */
    IoNamespace namespace();

    /** The controller whose queue it came on. */
    IoController controller();

    /** The queue it came on. */
    int qid();

    /** The NVM (or fabrics) opcode. */
    int opcode();

    /** The NSID field of the command. */
    int nsid();

    /** The starting LBA (read, write, write zeroes, compare). */
    long slba();

    /** The number of logical blocks, 1-based. */
    int nlb();

    /** The NVMe status it completed with (0: success). */
    int status();
}
