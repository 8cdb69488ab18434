// Package keda holds no code: its test runs the query KEDA's Redis
// scaler sends (testdata/redis_scaler.lua, KEDA's own Lua) against a real
// Redis holding crawlq jobs in every Asynq state, so the Helm chart's
// ScaledObjects (deploy/helm/crawlq) read the counts their formula
// expects. The chart's own test is the module deploy/helm/chartest.
package keda
