-- A results store written by NiceEval at schema 10 (before a growing plan raised `planned_total`),
-- by `niceeval run` of that version (commit 258cf74) in a project of one eval, `pattern/mid`, whose app
-- passes its first 7 calls (attempts = 5, pass_rule = 0.8): `run --until-decided --max-attempts 8`
-- (8 attempts, planned_total 5), a plain `run` reusing 5, and `run --until-decided --max-attempts 8`
-- again reusing 8 (planned_total 5).
PRAGMA user_version = 10;
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
   "extras" TEXT,
   "agreement" REAL,
   "judge_samples" INTEGER,
   "judge_input" TEXT
);
INSERT INTO "assertion_results" VALUES('01M98WW6ME1D1WX0X1MQS0T6DA','01M98WW6M5BBG05TWNWBAXDXJ9',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6MT3NYVF9ZBYZX4WV98','01M98WW6MFBX53GY86T8SJQ923',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6MVSN8C9VD0XQ7Q6YSJ','01M98WW6MFBX5G6JNH0DDHH5FZ',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6MVSN8CM5SN27DFQGX9','01M98WW6MS2N4X8X6P7V8QJ87E',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6MWQ7AJTADPYYS67R4P','01M98WW6MVSN8VNM8NDSJ3WAJG',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6N30F0G8S3B36780KW0','01M98WW6N2J06EFFNHGQNN8RR1',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6N8XCYKW42H2K1W23YS','01M98WW6N7YKQQJEK6YMKFPVMZ',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'matched',NULL,NULL,NULL,'expected equals(''yes''), got ''yes''','equals','{"value":"yes"}','"yes"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "assertion_results" VALUES('01M98WW6NDBJZZBW8VVEVAP16T','01M98WW6NCG6S1P7NA0KKZBKZV',0,'Says yes','Says yes',NULL,'record',NULL,NULL,'mismatched',NULL,NULL,NULL,'expected equals(''yes''), got ''no''','equals','{"value":"yes"}','"no"','evals/pattern.py',8,0,'boolean',NULL,NULL,NULL,NULL,NULL,NULL);
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
   "notes" TEXT,
   "eval_module" TEXT,
   "eval_name" TEXT,
   "judge_cost_usd" REAL,
   "judge_estimated_cost_usd" REAL,
   "regraded_from" TEXT
);
INSERT INTO "attempts" VALUES('01M98WW6M5BBG05TWNWBAXDXJ9','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',0,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'4a95acc3642cdb8faf7f414252f00fd6e8af644ba1686297f9631c1a7696712e','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":0,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.429Z','2026-12-07T18:39:51.450Z',9.435,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6MFBX53GY86T8SJQ923','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',1,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'6bee1af18b393c2fabd0dd09fd99ecc4f988ed495bb4103889e62212ec73d2bd','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":1,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.439Z','2026-12-07T18:39:51.452Z',11.328,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6MFBX5G6JNH0DDHH5FZ','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',2,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'1178c82a4a4068ec2cb0af985cdcfa47eb63a9a5256a6416860cf70790abedc7','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":2,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.439Z','2026-12-07T18:39:51.452Z',11.368,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6MS2N4X8X6P7V8QJ87E','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',3,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'7be1b08d8d3ed9c7ccd07f51e89cd8315a8da088a410d71831a4dd8d2806ceb2','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":3,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.449Z','2026-12-07T18:39:51.452Z',1.882,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6MVSN8VNM8NDSJ3WAJG','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',4,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'cb81f8ace6b1334440fd3ffd75397b498b31dbb7e2f812ebee22d50b081e32e8','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":4,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.451Z','2026-12-07T18:39:51.453Z',0.948,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6N2J06EFFNHGQNN8RR1','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',5,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'62c029f5ed3c83a562d775aa3caf4873716e247b1d694893054fc258d7474825','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":5,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.458Z','2026-12-07T18:39:51.459Z',0.673,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6N7YKQQJEK6YMKFPVMZ','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',6,'pass','passed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'664737bc3be1d640f09844f04d060418e01d703545179fc01285c99d789e48de','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":6,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.463Z','2026-12-07T18:39:51.464Z',0.734,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
INSERT INTO "attempts" VALUES('01M98WW6NCG6S1P7NA0KKZBKZV','01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',7,'pass','failed',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'9ac3d92dedf29b7c7a7e7aff9a8f76e90e3bd4b7cddc3e7904e00827f694d870','{"adapter":{"name":"python","version":"1"},"eval_id":"pattern/mid","eval_kind":"pass","eval_options":{"judge":null,"tags":[]},"experiment_id":"local","judge":null,"judge_version":null,"model":null,"options":{"callable":"app:reply"},"ordinal":7,"source":{"evals/pattern.py":"c40fb79fac31fcee6484c7dd98a41cf5bbeb8442ddf3e03c0c76ff1f53cafc6c"},"sut":{"app.py":"767e47d66feaf15f967143a3e9e4f614bd7aa8d800ffb1d81d5592efadfca39c"}}','2026-12-07T18:39:51.468Z','2026-12-07T18:39:51.469Z',0.778,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'pattern','mid',NULL,NULL,NULL);
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
CREATE TABLE "judge_inputs" (
   "sha256" TEXT PRIMARY KEY NOT NULL,
   "content" TEXT NOT NULL
);
CREATE TABLE "labels" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "attempt_id" TEXT NOT NULL REFERENCES "attempts"("id"),
   "assertion_key" TEXT,
   "value" REAL NOT NULL,
   "author" TEXT NOT NULL,
   "comment" TEXT,
   "created_at" TEXT NOT NULL
);
CREATE TABLE "run_heartbeats" (
   "run_id" TEXT PRIMARY KEY NOT NULL REFERENCES "runs"("id"),
   "beat_at" TEXT NOT NULL
);
INSERT INTO "run_heartbeats" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','2026-12-07T18:39:51.426Z');
INSERT INTO "run_heartbeats" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','2026-12-07T18:39:53.650Z');
INSERT INTO "run_heartbeats" VALUES('01M98WWEVX5ETZYFX8R9WWK258','2026-12-07T18:39:59.871Z');
CREATE TABLE "run_plan" (
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "experiment_id" TEXT NOT NULL,
   "eval_id" TEXT NOT NULL,
   "ordinal" INTEGER NOT NULL,
   "case_id" TEXT,
   PRIMARY KEY ("run_id", "experiment_id", "eval_id", "ordinal")
);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',0,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',1,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',2,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',3,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',4,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',5,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',6,NULL);
INSERT INTO "run_plan" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',7,NULL);
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
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',0,'01M98WW6M5BBG05TWNWBAXDXJ9','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',1,'01M98WW6MFBX53GY86T8SJQ923','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',2,'01M98WW6MFBX5G6JNH0DDHH5FZ','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',3,'01M98WW6MS2N4X8X6P7V8QJ87E','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',4,'01M98WW6MVSN8VNM8NDSJ3WAJG','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',5,'01M98WW6N2J06EFFNHGQNN8RR1','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',6,'01M98WW6N7YKQQJEK6YMKFPVMZ','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',7,'01M98WW6NCG6S1P7NA0KKZBKZV','origin','new','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',0,'01M98WW6M5BBG05TWNWBAXDXJ9','reference','reused','0.8');
INSERT INTO "run_slots" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',1,'01M98WW6MFBX53GY86T8SJQ923','reference','reused','0.8');
INSERT INTO "run_slots" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',2,'01M98WW6MFBX5G6JNH0DDHH5FZ','reference','reused','0.8');
INSERT INTO "run_slots" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',3,'01M98WW6MS2N4X8X6P7V8QJ87E','reference','reused','0.8');
INSERT INTO "run_slots" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',4,'01M98WW6MVSN8VNM8NDSJ3WAJG','reference','reused','0.8');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',0,'01M98WW6M5BBG05TWNWBAXDXJ9','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',1,'01M98WW6MFBX53GY86T8SJQ923','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',2,'01M98WW6MFBX5G6JNH0DDHH5FZ','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',3,'01M98WW6MS2N4X8X6P7V8QJ87E','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',4,'01M98WW6MVSN8VNM8NDSJ3WAJG','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',5,'01M98WW6N2J06EFFNHGQNN8RR1','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',6,'01M98WW6N7YKQQJEK6YMKFPVMZ','reference','reused','0.8 until decided at 0.95');
INSERT INTO "run_slots" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',7,'01M98WW6NCG6S1P7NA0KKZBKZV','reference','reused','0.8 until decided at 0.95');
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
   "budget_usd" REAL,
   "kind" TEXT,
   "regrade_of" TEXT
);
INSERT INTO "runs" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','2026-12-07T18:39:51.424Z','2026-12-07T18:39:51.471Z','finished','["run", "--until-decided", "--max-attempts", "8"]','0.1.0',5,'/tmp/mk10/niceeval.toml','["local"]',26104,'vm','2026-12-07T18:39:49.350Z',5,NULL,NULL,NULL,NULL,'inprocess',NULL,'run',NULL);
INSERT INTO "runs" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','2026-12-07T18:39:53.649Z','2026-12-07T18:39:53.658Z','finished','["run"]','0.1.0',0,'/tmp/mk10/niceeval.toml','["local"]',26221,'vm','2026-12-07T18:39:51.300Z',5,NULL,NULL,NULL,NULL,'inprocess',NULL,'run',NULL);
INSERT INTO "runs" VALUES('01M98WWEVX5ETZYFX8R9WWK258','2026-12-07T18:39:59.870Z','2026-12-07T18:39:59.890Z','finished','["run", "--until-decided", "--max-attempts", "8"]','0.1.0',5,'/tmp/mk10/niceeval.toml','["local"]',26601,'vm','2026-12-07T18:39:57.080Z',5,NULL,NULL,NULL,NULL,'inprocess',NULL,'run',NULL);
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
INSERT INTO "turns" VALUES('01M98WW6M5BBG05TWNWBAXDXJ9','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,4.663,NULL);
INSERT INTO "turns" VALUES('01M98WW6MFBX53GY86T8SJQ923','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,11.036,NULL);
INSERT INTO "turns" VALUES('01M98WW6MFBX5G6JNH0DDHH5FZ','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,11.219,NULL);
INSERT INTO "turns" VALUES('01M98WW6MS2N4X8X6P7V8QJ87E','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,1.601,NULL);
INSERT INTO "turns" VALUES('01M98WW6MVSN8VNM8NDSJ3WAJG','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,0.764,NULL);
INSERT INTO "turns" VALUES('01M98WW6N2J06EFFNHGQNN8RR1','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,0.418,NULL);
INSERT INTO "turns" VALUES('01M98WW6N7YKQQJEK6YMKFPVMZ','default',0,'mid','yes','completed','[]',NULL,NULL,NULL,0.462,NULL);
INSERT INTO "turns" VALUES('01M98WW6NCG6S1P7NA0KKZBKZV','default',0,'mid','no','completed','[]',NULL,NULL,NULL,0.477,NULL);
CREATE TABLE "unit_fold_runs" (
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "format" INTEGER NOT NULL,
   "units" INTEGER NOT NULL,
   PRIMARY KEY ("run_id", "format")
);
INSERT INTO "unit_fold_runs" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M',1,1);
INSERT INTO "unit_fold_runs" VALUES('01M98WW8SGP2DCF56TW5H2D3T0',1,1);
INSERT INTO "unit_fold_runs" VALUES('01M98WWEVX5ETZYFX8R9WWK258',1,1);
CREATE TABLE "unit_folds" (
   "run_id" TEXT NOT NULL REFERENCES "runs"("id"),
   "experiment_id" TEXT NOT NULL,
   "eval_id" TEXT NOT NULL,
   "attempts" INTEGER NOT NULL,
   "told" INTEGER,
   "first_ordinal" INTEGER,
   "first_seen" INTEGER,
   "case_id" TEXT,
   "eval_module" TEXT,
   "eval_name" TEXT,
   "kind" TEXT,
   "pass_rule" TEXT,
   "states" INTEGER,
   "unrankable" INTEGER,
   "gates" INTEGER,
   "gated" INTEGER,
   "scored_gate_passed" INTEGER,
   "max_score" REAL,
   "score_lo" REAL,
   "score_hi" REAL,
   "score_n" INTEGER,
   "evidence_n" INTEGER,
   "top_lo" REAL,
   "results" INTEGER,
   "result_slots" INTEGER,
   "key_pairs" TEXT,
   "exceptions" TEXT,
   PRIMARY KEY ("run_id", "experiment_id", "eval_id")
);
INSERT INTO "unit_folds" VALUES('01M98WW6M0FYYEHVENRAKJ4Y3M','local','pattern',8,1,0,1099511627783,NULL,'pattern','mid','pass','0.8 until decided at 0.95',65543,0,0,0,0,NULL,NULL,NULL,0,0,NULL,8,8,'["0:Says yes"]','7 0 mismatched');
INSERT INTO "unit_folds" VALUES('01M98WW8SGP2DCF56TW5H2D3T0','local','pattern',5,1,0,4398046511104,NULL,'pattern','mid','pass','0.8',5,0,0,0,0,NULL,NULL,NULL,0,0,NULL,5,5,'["0:Says yes"]',NULL);
INSERT INTO "unit_folds" VALUES('01M98WWEVX5ETZYFX8R9WWK258','local','pattern',8,1,0,1099511627783,NULL,'pattern','mid','pass','0.8 until decided at 0.95',65543,0,0,0,0,NULL,NULL,NULL,0,0,NULL,8,8,'["0:Says yes"]','7 0 mismatched');
CREATE INDEX "attempts_by_run"
    ON "attempts" ("run_id");
CREATE INDEX "attempts_by_slot"
    ON "attempts" ("experiment_id", "eval_id", "ordinal", "ended_at");
CREATE INDEX "attempts_by_state"
    ON "attempts" ("state");
CREATE INDEX "attempts_by_identity"
    ON "attempts" ("experiment_id", "eval_module", "eval_name", "case_id", "ordinal", "ended_at");
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
CREATE INDEX "labels_by_assertion"
    ON "labels" ("attempt_id", "assertion_key", "author");
CREATE INDEX "attempts_by_regraded_from"
    ON "attempts" ("regraded_from");
CREATE VIEW "run_results" AS SELECT s.run_id AS run_id, r.group_id AS group_id, r.started_at AS run_started_at, s.experiment_id AS experiment_id, s.eval_id AS eval_id, a.case_id AS case_id, s.ordinal AS ordinal, a.eval_module AS eval_module, a.eval_name AS eval_name, s.relation AS relation, s.plan_reason AS plan_reason, s.pass_rule AS pass_rule, s.attempt_id AS attempt_id, a.run_id AS attempt_run_id, a.kind AS kind, a.state AS state, a.gate AS gate, a.score AS score, a.max_score AS max_score, a.reason AS reason, a.error AS error, a.duration_ms AS duration_ms, a.cost_usd AS cost_usd, a.ended_at AS ended_at FROM run_slots s JOIN runs r ON r.id = s.run_id LEFT JOIN attempts a ON a.id = s.attempt_id;
CREATE VIEW "run_status" AS SELECT r.id AS id, r.group_id AS group_id, r.shard_index AS shard_index, r.shard_count AS shard_count, r.started_at AS started_at, r.ended_at AS ended_at, r.exit_code AS exit_code, CASE WHEN r.status = 'running' AND h.beat_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-30 seconds') THEN 'abandoned' ELSE r.status END AS status, r.status AS stored_status, h.beat_at AS last_beat_at, r.owner_pid AS owner_pid, r.owner_host AS owner_host FROM runs r LEFT JOIN run_heartbeats h ON h.run_id = r.id;
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
CREATE TRIGGER labels_no_update BEFORE UPDATE ON labels BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER labels_no_delete BEFORE DELETE ON labels BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER labels_no_replace BEFORE INSERT ON labels WHEN EXISTS (SELECT 1 FROM labels WHERE id IS NEW.id) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER unit_folds_no_update BEFORE UPDATE ON unit_folds BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER unit_folds_no_delete BEFORE DELETE ON unit_folds BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER unit_folds_no_replace BEFORE INSERT ON unit_folds WHEN EXISTS (SELECT 1 FROM unit_folds WHERE run_id IS NEW.run_id AND experiment_id IS NEW.experiment_id AND eval_id IS NEW.eval_id) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER unit_fold_runs_no_update BEFORE UPDATE ON unit_fold_runs BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER unit_fold_runs_no_delete BEFORE DELETE ON unit_fold_runs BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER unit_fold_runs_no_replace BEFORE INSERT ON unit_fold_runs WHEN EXISTS (SELECT 1 FROM unit_fold_runs WHERE run_id IS NEW.run_id AND format IS NEW.format) BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only: this key is already sealed'); END;
CREATE TRIGGER judge_inputs_no_update BEFORE UPDATE ON judge_inputs BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER judge_inputs_no_delete BEFORE DELETE ON judge_inputs BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END;
CREATE TRIGGER judge_inputs_once BEFORE INSERT ON judge_inputs WHEN EXISTS (SELECT 1 FROM judge_inputs WHERE sha256 IS NEW.sha256) BEGIN SELECT RAISE(IGNORE); END;
CREATE TRIGGER runs_no_replace BEFORE INSERT ON runs WHEN EXISTS (SELECT 1 FROM runs WHERE id IS NEW.id) BEGIN SELECT RAISE(ABORT, 'a run row is written once: this run id exists'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'run rows are never deleted'); END;
CREATE TRIGGER run_slots_only_while_running BEFORE INSERT ON run_slots WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable: its slots and plan are not added to'); END;
CREATE TRIGGER run_plan_only_while_running BEFORE INSERT ON run_plan WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable: its slots and plan are not added to'); END;
CREATE TRIGGER unit_folds_only_when_final BEFORE INSERT ON unit_folds WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS 'running' BEGIN SELECT RAISE(ABORT, 'the units of a running run are folded on read: its folds are stored once it is finished'); END;
CREATE TRIGGER unit_fold_runs_only_when_final BEFORE INSERT ON unit_fold_runs WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS 'running' BEGIN SELECT RAISE(ABORT, 'the units of a running run are folded on read: its folds are stored once it is finished'); END;
CREATE TRIGGER assertion_results_not_under_folds BEFORE INSERT ON assertion_results WHEN EXISTS (SELECT 1 FROM run_slots s JOIN unit_fold_runs f ON f.run_id = s.run_id WHERE s.attempt_id = NEW.attempt_id) BEGIN SELECT RAISE(ABORT, 'a sealed attempt never gains results: the stored folds of a finished run summarise them'); END;
CREATE TRIGGER runs_finished_are_immutable BEFORE UPDATE ON runs WHEN OLD.status IS NOT 'running' BEGIN SELECT RAISE(ABORT, 'a finished run is immutable'); END;
CREATE TRIGGER runs_running_may_only_finish BEFORE UPDATE ON runs WHEN NEW.id IS NOT OLD.id OR NEW.started_at IS NOT OLD.started_at OR NEW.argv IS NOT OLD.argv OR NEW.niceeval_version IS NOT OLD.niceeval_version OR NEW.config_file IS NOT OLD.config_file OR NEW.experiments IS NOT OLD.experiments OR NEW.owner_pid IS NOT OLD.owner_pid OR NEW.owner_host IS NOT OLD.owner_host OR NEW.owner_started_at IS NOT OLD.owner_started_at OR NEW.planned_total IS NOT OLD.planned_total OR NEW.shard_index IS NOT OLD.shard_index OR NEW.shard_count IS NOT OLD.shard_count OR NEW.group_id IS NOT OLD.group_id OR NEW.plan_digest IS NOT OLD.plan_digest OR NEW.executor IS NOT OLD.executor OR NEW.budget_usd IS NOT OLD.budget_usd OR NEW.kind IS NOT OLD.kind OR NEW.regrade_of IS NOT OLD.regrade_of BEGIN SELECT RAISE(ABORT, 'a running run may only be finished (status, ended_at, exit_code)'); END;
COMMIT;
