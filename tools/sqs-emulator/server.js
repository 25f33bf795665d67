// The test stack's SQS: local-aws-sqs 2.0.2 (pinned in package.json) on 127.0.0.1:PORT,
// with Alakai's dispatch queue and its DLQ, made to behave like AWS where 2.0.2 does not:
//  - the 60 s wait before re-creating a deleted queue is off (emulateQueueCreationLifecycle)
//  - ApproximateNumberOfMessages counts only visible messages (2.0.2 adds in-flight ones)
//  - an empty ReceiveMessage answer is {} (2.0.2 sends an empty body; AWS sends {})
//  - a ReceiveMessage answer holds each message once (2.0.2 may repeat a message received
//    with VisibilityTimeout=0; its ApproximateReceiveCount is still inflated by those)
//  - a message moved to a DLQ keeps its SentTimestamp (AWS keeps a standard queue's original
//    enqueue time, from which the DLQ's retention counts; 2.0.2 stamps the move)
// Only JSON-protocol (X-Amz-Target) answers are adapted; the Query protocol is as 2.0.2.
// usage: node server.js PORT [QUEUE [DLQ [MAX_RECEIVE]]]
"use strict";
const http = require("http");

const port = Number(process.argv[2] || 9324);
const queue = process.argv[3] || "alakai-dispatch";
const dlq = process.argv[4] || queue + "-dlq";
const maxReceive = Number(process.argv[5] || 3);
const region = process.env.RD_SQS_REGION || "us-east-1";
const account = "123456789012";

// MessageId -> its first SentTimestamp (ms, as text): set when SendMessage answers.
const firstSent = new Map();

function adapt(target, text) {
  if (target === "AmazonSQS.ReceiveMessage" && text.trim() === "") return "{}";
  let j;
  try { j = JSON.parse(text); } catch (e) { return text; }
  if (target === "AmazonSQS.GetQueueAttributes" && j && j.Attributes) {
    const a = j.Attributes;
    if (a.ApproximateNumberOfMessages !== undefined && a.ApproximateNumberOfMessagesNotVisible !== undefined) {
      const v = Number(a.ApproximateNumberOfMessages) - Number(a.ApproximateNumberOfMessagesNotVisible);
      a.ApproximateNumberOfMessages = String(v > 0 ? v : 0);
    }
  } else if (target === "AmazonSQS.ReceiveMessage" && j && Array.isArray(j.Messages)) {
    const seen = new Set();
    j.Messages = j.Messages.filter((m) => !seen.has(m.MessageId) && seen.add(m.MessageId));
    for (const m of j.Messages) {
      if (!m.Attributes || m.Attributes.SentTimestamp === undefined) continue;
      if (firstSent.has(m.MessageId)) m.Attributes.SentTimestamp = firstSent.get(m.MessageId);
      else firstSent.set(m.MessageId, m.Attributes.SentTimestamp);
    }
  } else if (target === "AmazonSQS.SendMessage" && j && j.MessageId) {
    if (!firstSent.has(j.MessageId)) firstSent.set(j.MessageId, String(Date.now()));
    return text;
  } else {
    return text;
  }
  return JSON.stringify(j);
}

// Wrap the request handler the emulator installs: adapt the answer body before it leaves.
const createServer = http.createServer;
http.createServer = function (...args) {
  const handler = args.find((a) => typeof a === "function");
  const wrapped = (req, res) => {
    const target = req.headers["x-amz-target"];
    if (target === "AmazonSQS.GetQueueAttributes" || target === "AmazonSQS.ReceiveMessage" ||
        target === "AmazonSQS.SendMessage") {
      const end = res.end.bind(res);
      res.end = (chunk, ...rest) => {
        if (chunk !== undefined && chunk !== null && typeof chunk !== "function") {
          const out = adapt(target, Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk));
          if (!res.headersSent) res.removeHeader("content-length");
          return end(out, ...rest);
        }
        if (target === "AmazonSQS.ReceiveMessage" && res.statusCode === 200 && !res.headersSent) {
          res.removeHeader("content-length");
          return typeof chunk === "function" ? end("{}", chunk) : end("{}", ...rest);
        }
        return end(chunk, ...rest);
      };
    }
    return handler(req, res);
  };
  const others = args.filter((a) => typeof a !== "function");
  return createServer.call(http, ...others, wrapped);
};

const { createSqsServer } = require("local-aws-sqs");
createSqsServer({
  port,
  hostname: "127.0.0.1",
  region,
  accountId: account,
  emulateQueueCreationLifecycle: false,
  queues: [
    { QueueName: dlq },
    {
      QueueName: queue,
      Attributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: `arn:aws:sqs:${region}:${account}:${dlq}`,
          maxReceiveCount: String(maxReceive),
        }),
      },
    },
  ],
}).then(() => console.log(`sqs emulator on 127.0.0.1:${port}: ${queue}, ${dlq} (maxReceiveCount ${maxReceive})`));
