-- 0001_init.sql — perfcast's schema: experiments, uploaded profiles with their
-- normalized rows, aggregated measurements, numbered model sets, and the job
-- queue that turns uploads into models.

CREATE TABLE experiments (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    parameters  text[] NOT NULL,                 -- ordered parameter names
    scaling     text NOT NULL CHECK (scaling IN ('weak', 'strong')),
    spec        jsonb NOT NULL,                  -- the validated creation document (training, cost, options)
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE callpaths (
    id            bigserial PRIMARY KEY,
    experiment_id bigint NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    name          text NOT NULL,
    category      text NOT NULL CHECK (category IN ('comp', 'comm', 'mem', 'host')),
    UNIQUE (experiment_id, name)
);

CREATE TABLE profiles (
    id            bigserial PRIMARY KEY,
    experiment_id bigint NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    sha256        bytea NOT NULL,
    point         double precision[] NOT NULL,   -- one value per experiment parameter, in order
    repetition    integer NOT NULL CHECK (repetition >= 1),
    format        text NOT NULL,
    ranks         integer NOT NULL,              -- distinct ranks in the upload
    size          bigint NOT NULL,
    raw           bytea NOT NULL,                -- the bytes as uploaded
    job_id        bigint,                        -- the job this upload queued or joined
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (experiment_id, sha256)
);

-- rank x step x callpath x metric sums of one profile
CREATE TABLE profile_rows (
    profile_id  bigint NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    rank        integer NOT NULL,
    phase       smallint NOT NULL,               -- 0 train, 1 validation, 2 between steps
    step        integer NOT NULL,
    callpath_id bigint NOT NULL REFERENCES callpaths(id) ON DELETE CASCADE,
    metric      text NOT NULL,
    value       double precision NOT NULL
);
CREATE INDEX profile_rows_profile ON profile_rows (profile_id);

CREATE TABLE jobs (
    id            bigserial PRIMARY KEY,
    experiment_id bigint NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    state         text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    max_attempts  integer NOT NULL DEFAULT 3,
    error         text,
    lease_until   timestamptz,
    worker        text,
    model_set_id  bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);
-- at most one queued job per experiment: further uploads join it (coalescing)
CREATE UNIQUE INDEX jobs_one_queued ON jobs (experiment_id) WHERE state = 'queued';
CREATE INDEX jobs_claimable ON jobs (id) WHERE state IN ('queued', 'running');

CREATE TABLE model_sets (
    id            bigserial PRIMARY KEY,
    experiment_id bigint NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    number        integer NOT NULL,              -- 1, 2, ... per experiment
    job_id        bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (experiment_id, number)
);

-- aggregated values per coordinate, callpath (or application part), metric and phase
CREATE TABLE measurements (
    model_set_id  bigint NOT NULL REFERENCES model_sets(id) ON DELETE CASCADE,
    point         double precision[] NOT NULL,
    level         text NOT NULL CHECK (level IN ('callpath', 'application')),
    name          text NOT NULL,                 -- callpath name, or epoch|comp|comm|mem
    category      text,
    metric        text NOT NULL,
    phase         text NOT NULL,                 -- train|validation|between|epoch
    value         double precision NOT NULL,
    repetitions   double precision[] NOT NULL,
    rank_values   double precision[] NOT NULL,
    rank_ids      integer[] NOT NULL
);
CREATE INDEX measurements_set ON measurements (model_set_id, level, name, metric);

CREATE TABLE models (
    model_set_id  bigint NOT NULL REFERENCES model_sets(id) ON DELETE CASCADE,
    level         text NOT NULL CHECK (level IN ('callpath', 'application')),
    name          text NOT NULL,                 -- callpath name, or epoch|comp|comm|mem
    category      text,
    metric        text NOT NULL,
    function      text,                          -- Extra-P syntax; NULL when not modeled
    model         jsonb,                         -- constant, terms, quality, interval data
    growth_poly   double precision,              -- leading exponents, for sort=growth
    growth_log    double precision,
    points        integer NOT NULL,
    reason        text,                          -- why there is no model
    PRIMARY KEY (model_set_id, level, name, metric)
);
