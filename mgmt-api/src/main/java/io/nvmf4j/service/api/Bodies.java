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
}
