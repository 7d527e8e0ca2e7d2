package io.nvmf4j.engine;

/** A controller as an engine's data path reports it to an {@link IoObserver}: one object per controller. */
public interface IoController {
    /** The NQN of its subsystem. */
    String subsystemNqn();

    /** The host NQN it was connected with. */
    String hostnqn();

    /** Its controller ID. */
    int cntlid();

    /** True once it has been torn down (an observer may then drop what it keeps for it). */
    boolean isDestroyed();
}
