import { html, page, SafeHtml } from './html';
import { keyForm, KeyFormValues, ShownKey, shownKeySection } from './key-views';
import { navFor } from './keys-page';
import { errorBox, FormError } from './web-forms';
import type { OnboardingState } from './onboarding';
import { DEMO_LEADS } from './onboarding';
import type { SignedIn } from './web-session.service';

export interface WelcomePageState {
  onboarding: OnboardingState;
  origin: string;
  /** The first key's value, shown once after step 1. */
  created?: ShownKey;
  /** A refusal of step 1 (the key form) or step 2 (demo data already there). */
  keyError?: FormError;
  keyValues?: KeyFormValues;
  demoMessage?: { text: string; refused: boolean };
}

const n = (value: number) => value.toLocaleString('en-US');

/** One step: its number and title, and "Done" in words (not only a tick) once done. */
function step(number: number, title: string, done: boolean, body: SafeHtml): SafeHtml {
  return html`<li class="card step ${done ? 'done' : ''}" aria-labelledby="step-${number}">
  <h2 id="step-${number}"><span class="step-number" aria-hidden="true">${done ? '✓' : number}</span> ${title} ${done ? html`<span class="step-done">Done</span>` : html`<span class="visually-hidden">(to do)</span>`}</h2>
  ${body}
</li>`;
}

/**
 * /welcome: where a first sign-in lands. Three steps, all in test mode, each marked done from what
 * the account holds (a test key, test data, a request made with a test key), so coming back shows
 * where one stands.
 */
export function welcomePage(who: SignedIn, state: WelcomePageState): string {
  const { onboarding, created, origin } = state;
  const token = who.session.csrfToken;
  const [firstKey] = onboarding.testKeys;
  const hasData = onboarding.leads + onboarding.deals > 0;

  const keyStep = created
    ? shownKeySection(created, origin)
    : firstKey
      ? html`<p>You have a test key, <strong>${firstKey.name}</strong> (<code>${firstKey.prefix}…${firstKey.last4}</code>). Its value was shown once; make or roll keys on <a href="/settings/api-keys">API keys</a>.</p>`
      : html`<p>A test key reads and writes only test data, so nothing you try here touches real data.</p>
${errorBox(state.keyError)}
${keyForm(token, 'test', { name: 'My first key', ...state.keyValues }, state.keyError, { action: '/welcome/key', heading: null, restrictable: false })}`;

  const demo = state.demoMessage
    ? html`<p class="${state.demoMessage.refused ? 'notice' : 'success'}" role="status" id="demo-status">${state.demoMessage.text}</p>`
    : '';
  const dataStep = hasData
    ? html`${demo}<p>Your test data has <strong>${n(onboarding.leads)} leads</strong> and <strong>${n(onboarding.deals)} deals</strong>. See them on the <a href="/dashboard">dashboard</a> and the <a href="/pipeline">board</a>.</p>`
    : html`${demo}<p>Fill test mode with ${DEMO_LEADS} realistic leads, scored, and deals across every stage, so the dashboard, the board and the API have something to show. It takes a few seconds.</p>
<form method="post" action="/welcome/demo-data">
  <input type="hidden" name="_csrf" value="${token}">
  <p><button type="submit">Load demo data</button></p>
</form>`;

  const exploreStep = html`<p>Read the <a href="/docs">API reference</a> (every route, with examples you can run), then run the curl line from step 1${
    onboarding.keyUsed ? '' : ' (this step is done once a test key has made a request)'
  }. Your deals are on the <a href="/pipeline">board</a>.</p>`;

  return page({
    title: `Welcome, ${who.account.name}`,
    nav: navFor(who, '/welcome'),
    scripts: ['/assets/app.js'],
    body: html`<p class="lead">Three steps to your first API call. They all happen in <strong>test mode</strong>${
      who.session.livemode ? html` (you are looking at live data now; these steps still make test keys and test data)` : ''
    }.</p>
<ol class="steps">
${step(1, 'Create your first test key', !!firstKey || !!created, keyStep)}
${step(2, 'Load demo data', hasData, dataStep)}
${step(3, 'Make a request and explore', onboarding.keyUsed, exploreStep)}
</ol>
<p><a href="/dashboard">Go to the dashboard</a></p>`,
  });
}
