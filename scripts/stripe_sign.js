#!/usr/bin/env node
// Signs a payload as Stripe does, with Stripe's own Node library
// (`stripe.webhooks.generateTestHeaderString`), so the suite's Stripe tests
// are signed by the official signer rather than by our own code.
//
//   STRIPE_SIGN_SECRET=whsec_… STRIPE_SIGN_TIMESTAMP=1700000000 \
//     node scripts/stripe_sign.js < payload.json     # prints the header
//
// The secret comes from the environment (never argv, which `ps` shows).
// Then the header is checked with the library's own verifier
// (`signature.verifyHeader`, which takes any payload, JSON or not) before it
// is printed.
'use strict';
const Stripe = require('stripe');

const secret = process.env.STRIPE_SIGN_SECRET;
const timestamp = Number(process.env.STRIPE_SIGN_TIMESTAMP);
if (!secret || !Number.isInteger(timestamp)) {
  console.error('set STRIPE_SIGN_SECRET and STRIPE_SIGN_TIMESTAMP (unix seconds)');
  process.exit(2);
}
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const payload = Buffer.concat(chunks).toString('utf8');
  const stripe = new Stripe('sk_test_unused');
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  // Any tolerance: a timestamp far from now is a test's own choice. (The
  // library verifies no empty payload; the fuzz run signs those too.)
  if (payload.length > 0) {
    stripe.webhooks.signature.verifyHeader(payload, header, secret, Number.MAX_SAFE_INTEGER);
  }
  process.stdout.write(header);
});
