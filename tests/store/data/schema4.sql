-- A schema-4 store written by NiceEval at commit 55cf739 (`niceeval run` over evals/grow.py: one eval `first`,
-- shown as `grow`; evals/ds.py: eval `answers` with cases c1, c2): one finished run, three attempts.
PRAGMA user_version = 4;
BEGIN TRANSACTION;
CREATE TABLE "assertion_results" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "attempt_id" TEXT NOT NULL REFERENCES "attempts"("id"),
   "ordinal" INTEGER NOT NULL,
   "key" TEXT NOT NULL,
   "label" TEXT,
   "group_name" TEXT,
   "role" TEXT NOT NULL,
   "weight" REAL,
   "contribution" REAL,
   "state" TEXT NOT NULL,
   "measurement" REAL,
   "threshold" REAL,
   "reason" TEXT,
   "explanation" TEXT,
   "match_name" TEXT NOT NULL,
   "match_config" TEXT NOT NULL,
   "evidence" TEXT,
   "source_file" TEXT,
   "source_line" INTEGER,
   "or_stop" INTEGER NOT NULL,
   "match_kind" TEXT NOT NULL,
   "judge_audit" TEXT,
   "judge_tokens" INTEGER,
   "extras" TEXT
);
INSERT INTO "assertion_results" VALUES('01M955N5VBRBTS3YP4DCB1K4PQ','01M955N5VBRBTMGQXVEMNEAA4V',0,'has y','has y',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected includes(''y''), got ''yes''','includes','{"case_sensitive":true,"value":"y"}','"yes"','evals/ds.py',7,0,'boolean',NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M955N5VBRBV0G47WYDGDXJFF','01M955N5VBRBV0215HZE5VZD71',0,'has y','has y',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected includes(''y''), got ''yup''','includes','{"case_sensitive":true,"value":"y"}','"yup"','evals/ds.py',7,0,'boolean',NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M955N5VCN58ARH2CC25313G2','01M955N5VCN5818XM9WA6014JH',0,'has y','has y',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected includes(''y''), got ''yes''','includes','{"case_sensitive":true,"value":"y"}','"yes"','evals/grow.py',7,0,'boolean',NULL,NULL,NULL);
CREATE TABLE "attempts" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "experiment_id" TEXT NOT NULL,
   "eval_id" TEXT NOT NULL,
   "ordinal" INTEGER NOT NULL,
   "kind" TEXT NOT NULL,
   "state" TEXT NOT NULL,
   "reason" TEXT,
   "score" REAL,
   "max_score" REAL,
   "unavailable_weight" REAL,
   "partial_score" REAL,
   "gate" TEXT,
   "stop_cause" TEXT,
   "error" TEXT,
   "fingerprint" TEXT NOT NULL,
   "fingerprint_parts" TEXT NOT NULL,
   "started_at" TEXT NOT NULL,
   "ended_at" TEXT NOT NULL,
   "duration_ms" REAL NOT NULL,
   "input_tokens" INTEGER,
   "output_tokens" INTEGER,
   "judge_tokens" INTEGER NOT NULL,
   "case_id" TEXT,
   "case_value" TEXT,
   "case_metadata" TEXT,
   "cost_usd" REAL,
   "estimated_cost_usd" REAL,
   "sandbox" TEXT,
   "traceback" TEXT,
   "notes" TEXT
);
INSERT INTO "attempts" VALUES('01M955N5VBRBTMGQXVEMNEAA4V','01M955N5SNM998AVVC70Z15WEN','default','ds[c1]',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'23f6f3e25de81072c8452b97d2a657328afea0f6f30c371d32141c3ece468faf','{"adapter":{"name":null,"version":null},"case":"1e66080976283144c9ebffb37f6a804426e7b6c86853d2a5510633b72b0e22f9","eval_id":"ds[c1]","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"default","judge":null,"judge_version":null,"model":null,"options":{},"ordinal":0,"source_sha256":"78cafaadd83ea7fb58b6a28b04bc5f97fe1004d59eace67120054d77635327b8"}','2026-12-06T07:56:20.715Z','2026-12-06T07:56:20.715Z',0.22,NULL,NULL,0,'c1','{"id":"c1","q":"yes"}',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M955N5VBRBV0215HZE5VZD71','01M955N5SNM998AVVC70Z15WEN','default','ds[c2]',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'9ebb9e54bf242b1f8646f7487357093e5f83cab2f5793dfc2a6dab2553d519c0','{"adapter":{"name":null,"version":null},"case":"fceddd96b77e3986b6623b948c41894a302cd8a40a0cf50159c28fcd7ccc8cfa","eval_id":"ds[c2]","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"default","judge":null,"judge_version":null,"model":null,"options":{},"ordinal":0,"source_sha256":"78cafaadd83ea7fb58b6a28b04bc5f97fe1004d59eace67120054d77635327b8"}','2026-12-06T07:56:20.715Z','2026-12-06T07:56:20.716Z',0.06,NULL,NULL,0,'c2','{"id":"c2","q":"yup"}',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M955N5VCN5818XM9WA6014JH','01M955N5SNM998AVVC70Z15WEN','default','grow',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'a0a47dd6bb326ed3ca41b5c3a99bbaa2434d4110cdc78c9c4d7c698b08979c66','{"adapter":{"name":null,"version":null},"eval_id":"grow","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"default","judge":null,"judge_version":null,"model":null,"options":{},"ordinal":0,"source_sha256":"eb8a8de21cbc78c27c47abe94a1f6d22c5138d7662c259e9732ac1e76bc00b9b"}','2026-12-06T07:56:20.716Z','2026-12-06T07:56:20.716Z',0.055,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE "events" (
   "attempt_id" TEXT NOT NULL REFERENCES "attempts"("id"),
   "turn_ordinal" INTEGER NOT NULL,
   "seq" INTEGER NOT NULL,
   "kind" TEXT NOT NULL,
   "name" TEXT,
   "role" TEXT,
   "input" TEXT,
   "output" TEXT,
   "status" TEXT,
   "text" TEXT,
   PRIMARY KEY ("attempt_id", "turn_ordinal", "seq")
);
CREATE TABLE "group_verdicts" (
   "group_id" TEXT NOT NULL,
   "members" TEXT NOT NULL,
   "decided_by" TEXT NOT NULL,
   "exit_code" INTEGER NOT NULL,
   "not_run" INTEGER NOT NULL,
   "decided_at" TEXT NOT NULL,
   PRIMARY KEY ("group_id", "members", "decided_by")
);
CREATE TABLE "run_plan" (
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "experiment_id" TEXT NOT NULL,
   "eval_id" TEXT NOT NULL,
   "ordinal" INTEGER NOT NULL,
   "case_id" TEXT,
   PRIMARY KEY ("run_id", "experiment_id", "eval_id", "ordinal")
);
INSERT INTO "run_plan" VALUES('01M955N5SNM998AVVC70Z15WEN','default','ds[c1]',0,'c1');
INSERT INTO "run_plan" VALUES('01M955N5SNM998AVVC70Z15WEN','default','ds[c2]',0,'c2');
INSERT INTO "run_plan" VALUES('01M955N5SNM998AVVC70Z15WEN','default','grow',0,NULL);
CREATE TABLE "run_slots" (
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "experiment_id" TEXT NOT NULL,
   "eval_id" TEXT NOT NULL,
   "ordinal" INTEGER NOT NULL,
   "attempt_id" TEXT REFERENCES "attempts"("id"),
   "relation" TEXT NOT NULL,
   "plan_reason" TEXT NOT NULL,
   "pass_rule" TEXT,
   PRIMARY KEY ("run_id", "experiment_id", "eval_id", "ordinal")
);
INSERT INTO "run_slots" VALUES('01M955N5SNM998AVVC70Z15WEN','default','ds[c1]',0,'01M955N5VBRBTMGQXVEMNEAA4V','origin','new','any');
INSERT INTO "run_slots" VALUES('01M955N5SNM998AVVC70Z15WEN','default','ds[c2]',0,'01M955N5VBRBV0215HZE5VZD71','origin','new','any');
INSERT INTO "run_slots" VALUES('01M955N5SNM998AVVC70Z15WEN','default','grow',0,'01M955N5VCN5818XM9WA6014JH','origin','new','any');
CREATE TABLE "runs" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "started_at" TEXT NOT NULL,
   "ended_at" TEXT,
   "status" TEXT NOT NULL,
   "argv" TEXT NOT NULL,
   "niceeval_version" TEXT,
   "exit_code" INTEGER,
   "config_file" TEXT,
   "experiments" TEXT,
   "owner_pid" INTEGER,
   "owner_host" TEXT,
   "owner_started_at" TEXT,
   "planned_total" INTEGER,
   "shard_index" INTEGER,
   "shard_count" INTEGER,
   "group_id" TEXT,
   "plan_digest" TEXT,
   "executor" TEXT,
   "budget_usd" REAL
);
INSERT INTO "runs" VALUES('01M955N5SNM998AVVC70Z15WEN','2026-12-06T07:56:20.665Z','2026-12-06T07:56:20.717Z','finished','["run"]','0.1.0',0,'/tmp/evalid_s4/niceeval.toml','["default"]',6190,'vm','2026-12-06T07:56:14.650Z',3,NULL,NULL,NULL,NULL,'inprocess',NULL);
CREATE TABLE "turns" (
   "attempt_id" TEXT NOT NULL REFERENCES "attempts"("id"),
   "session" TEXT NOT NULL,
   "ordinal" INTEGER NOT NULL,
   "input" TEXT,
   "message" TEXT,
   "status" TEXT NOT NULL,
   "observed" TEXT NOT NULL,
   "input_tokens" INTEGER,
   "output_tokens" INTEGER,
   "cost_usd" REAL,
   "elapsed_ms" REAL,
   "data" TEXT,
   PRIMARY KEY ("attempt_id", "ordinal")
);
CREATE INDEX "attempts_by_run"
    ON "attempts" ("run_id");
CREATE INDEX "attempts_by_slot"
    ON "attempts" ("experiment_id", "eval_id", "ordinal", "ended_at");
CREATE INDEX "attempts_by_state"
    ON "attempts" ("state");
CREATE INDEX "assertion_results_by_attempt"
    ON "assertion_results" ("attempt_id", "ordinal");
CREATE INDEX "assertion_results_by_state"
    ON "assertion_results" ("state", "attempt_id");
CREATE INDEX "run_slots_by_run"
    ON "run_slots" ("run_id");
CREATE INDEX "run_slots_by_attempt"
    ON "run_slots" ("attempt_id");
CREATE INDEX "runs_by_group"
    ON "runs" ("group_id");
CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER attempts_no_replace BEFORE INSERT ON attempts WHEN EXISTS (SELECT 1 FROM attempts WHERE id IS NEW.id) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER assertion_results_no_update BEFORE UPDATE ON assertion_results BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER assertion_results_no_delete BEFORE DELETE ON assertion_results BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER assertion_results_no_replace BEFORE INSERT ON assertion_results WHEN EXISTS (SELECT 1 FROM assertion_results WHERE id IS NEW.id) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER turns_no_update BEFORE UPDATE ON turns BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER turns_no_delete BEFORE DELETE ON turns BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER turns_no_replace BEFORE INSERT ON turns WHEN EXISTS (SELECT 1 FROM turns WHERE attempt_id IS NEW.attempt_id AND ordinal IS NEW.ordinal) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER events_no_replace BEFORE INSERT ON events WHEN EXISTS (SELECT 1 FROM events WHERE attempt_id IS NEW.attempt_id AND turn_ordinal IS NEW.turn_ordinal AND seq IS NEW.seq) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER run_slots_no_update BEFORE UPDATE ON run_slots BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER run_slots_no_delete BEFORE DELETE ON run_slots BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER run_slots_no_replace BEFORE INSERT ON run_slots WHEN EXISTS (SELECT 1 FROM run_slots WHERE run_id IS NEW.run_id AND experiment_id IS NEW.experiment_id AND eval_id IS NEW.eval_id AND ordinal IS NEW.ordinal) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER run_plan_no_update BEFORE UPDATE ON run_plan BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER run_plan_no_delete BEFORE DELETE ON run_plan BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER run_plan_no_replace BEFORE INSERT ON run_plan WHEN EXISTS (SELECT 1 FROM run_plan WHERE run_id IS NEW.run_id AND experiment_id IS NEW.experiment_id AND eval_id IS NEW.eval_id AND ordinal IS NEW.ordinal) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER group_verdicts_no_update BEFORE UPDATE ON group_verdicts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER group_verdicts_no_delete BEFORE DELETE ON group_verdicts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER group_verdicts_no_replace BEFORE INSERT ON group_verdicts WHEN EXISTS (SELECT 1 FROM group_verdicts WHERE group_id IS NEW.group_id AND members IS NEW.members AND decided_by IS NEW.decided_by) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER runs_no_replace BEFORE INSERT ON runs WHEN EXISTS (SELECT 1 FROM runs WHERE id IS NEW.id) BEGIN SELECT RAISE(ABORT, 'a run row is written once: this run id exists'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'run rows are never deleted'); END;
CREATE TRIGGER run_slots_only_while_running BEFORE INSERT ON run_slots WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable: its slots and plan are not added to'); END;
CREATE TRIGGER run_plan_only_while_running BEFORE INSERT ON run_plan WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable: its slots and plan are not added to'); END;
CREATE TRIGGER runs_finished_are_immutable BEFORE UPDATE ON runs WHEN OLD.status IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable'); END;
CREATE TRIGGER runs_running_may_only_finish BEFORE UPDATE ON runs WHEN NEW.id IS NOT OLD.id OR NEW.started_at IS NOT OLD.started_at OR NEW.argv IS NOT OLD.argv OR NEW.niceeval_version IS NOT OLD.niceeval_version OR NEW.config_file IS NOT OLD.config_file OR NEW.experiments IS NOT OLD.experiments OR NEW.owner_pid IS NOT OLD.owner_pid OR NEW.owner_host IS NOT OLD.owner_host OR NEW.owner_started_at IS NOT OLD.owner_started_at OR NEW.planned_total IS NOT OLD.planned_total OR NEW.shard_index IS NOT OLD.shard_index OR NEW.shard_count IS NOT OLD.shard_count OR NEW.group_id IS NOT OLD.group_id OR NEW.plan_digest IS NOT OLD.plan_digest OR NEW.executor IS NOT OLD.executor OR NEW.budget_usd IS NOT OLD.budget_usd BEGIN SELECT RAISE(ABORT, 'a running run may only be finished (status, ended_at, exit_code)'); END;
COMMIT;
