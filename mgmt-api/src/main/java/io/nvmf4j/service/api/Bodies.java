package io.nvmf4j.service.api;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Request bodies that are not config fragments. */
final class Bodies {
    private Bodies() {
    }

    /** PATCH /bdevs/{name}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Grow {
        public Long numBlocks;
    }

    /** PATCH /subsystems/{nqn}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class SubsystemPatch {
        public Boolean allowAnyHost;
    }

    /** POST /subsystems/{nqn}/hosts. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Host {
        public String nqn;
    }

    /** POST /bdevs/{name}/errors: an injection into an error bdev (see io.nvmf4j.bdev.ErrorBdev). */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class ErrorInjection {
        /** read, write, flush, write-zeroes, deallocate or all. */
        public String ioType;
        /** eio, nospc, gone or timeout. */
        public String errorType;
        /** Commands to fail; 0 or absent: every one until DELETE. */
        public Integer count;
        /** errorType timeout only: how long a command is held before it fails (1..600000). */
        public Long timeoutMs;
    }

    /** PUT /subsystems/{nqn}/listeners/{transport}/{address}/{port}/ana/{group}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class AnaState {
        /** optimized, non-optimized, inaccessible, persistent-loss or change. */
        public String state;
    }
}
