-- A schema-2 store written by NiceEval at commit a6b4268 (built with its tests/store/conftest.py helpers: two runs, one finished, one left running; three attempts; a reused slot).
PRAGMA user_version = 2;
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
   "judge_tokens" INTEGER
);
INSERT INTO "assertion_results" VALUES('01M8SYJ2QPX1JZGTE9QEMKNNXW','01M8SYJ2QN0HNJR4K9YQ725XKR',0,'k0','check 0',NULL,'gate',NULL,NULL,'mismatched',NULL,NULL,NULL,NULL,'equals','{"expected": 1}','{"actual": 1}','evals/a.py',3,0,'boolean',NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M8SYJ2QPX1KEK4JNC9KGNG0Y','01M8SYJ2QN0HNJR4K9YQ725XKR',1,'k1','check 1',NULL,'gate',NULL,NULL,'matched',NULL,NULL,NULL,NULL,'equals','{"expected": 1}','{"actual": 1}','evals/a.py',3,0,'boolean',NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M8SYJ2QPX1KZDPGKA2BD53QF','01M8SYJ2QPX1KS63RENYB961HB',0,'k0','check 0',NULL,'gate',NULL,NULL,'matched',NULL,NULL,NULL,NULL,'equals','{"expected": 1}','{"actual": 1}','evals/a.py',3,0,'boolean',NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M8SYJ2QQDZJWPZC4NVKVD9TB','01M8SYJ2QQDZJNCF9AXRES0EC9',0,'k0','check 0',NULL,'gate',NULL,NULL,'matched',NULL,NULL,NULL,NULL,'equals','{"expected": 1}','{"actual": 1}','evals/a.py',3,0,'boolean',NULL,NULL);
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
   "judge_tokens" INTEGER NOT NULL
);
INSERT INTO "attempts" VALUES('01M8SYJ2QN0HNJR4K9YQ725XKR','01M8SYJ2QN0HN76GN16Q3B5XSY','exp','evals/a',0,'pass','failed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fp-1','{"model": "m"}','2025-01-01T00:00:02.002Z','2025-01-01T00:00:02.002Z',10.0,12,7,0);
INSERT INTO "attempts" VALUES('01M8SYJ2QPX1KS63RENYB961HB','01M8SYJ2QN0HN76GN16Q3B5XSY','exp','evals/b',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fp-1','{"model": "m"}','2025-01-01T00:00:03.003Z','2025-01-01T00:00:03.003Z',10.0,NULL,NULL,0);
INSERT INTO "attempts" VALUES('01M8SYJ2QQDZJNCF9AXRES0EC9','01M8SYJ2QPX1M2D7PB51TRMTA5','exp','evals/a',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fp-1','{"model": "m"}','2025-01-01T00:00:06.006Z','2025-01-01T00:00:06.006Z',10.0,NULL,NULL,0);
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
INSERT INTO "run_slots" VALUES('01M8SYJ2QN0HN76GN16Q3B5XSY','exp','evals/a',0,'01M8SYJ2QN0HNJR4K9YQ725XKR','origin','new',NULL);
INSERT INTO "run_slots" VALUES('01M8SYJ2QN0HN76GN16Q3B5XSY','exp','evals/b',0,'01M8SYJ2QPX1KS63RENYB961HB','origin','new',NULL);
INSERT INTO "run_slots" VALUES('01M8SYJ2QPX1M2D7PB51TRMTA5','exp','evals/b',0,'01M8SYJ2QPX1KS63RENYB961HB','reference','reused','all');
INSERT INTO "run_slots" VALUES('01M8SYJ2QPX1M2D7PB51TRMTA5','exp','evals/a',0,'01M8SYJ2QQDZJNCF9AXRES0EC9','origin','new',NULL);
CREATE TABLE "runs" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "started_at" TEXT NOT NULL,
   "ended_at" TEXT,
   "status" TEXT NOT NULL,
   "argv" TEXT NOT NULL,
   "niceeval_version" TEXT,
   "exit_code" INTEGER,
   "config_file" TEXT,
   "experiments" TEXT
);
INSERT INTO "runs" VALUES('01M8SYJ2QN0HN76GN16Q3B5XSY','2025-01-01T00:00:01.001Z','2025-01-01T00:00:04.004Z','finished','["niceeval", "run"]','0.1.0',1,'niceeval.toml','["exp"]');
INSERT INTO "runs" VALUES('01M8SYJ2QPX1M2D7PB51TRMTA5','2025-01-01T00:00:05.005Z',NULL,'running','["niceeval", "run"]','0.1.0',NULL,'niceeval.toml','["exp"]');
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
CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER assertion_results_no_update BEFORE UPDATE ON assertion_results BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER assertion_results_no_delete BEFORE DELETE ON assertion_results BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
COMMIT;
