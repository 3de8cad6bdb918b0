// The in-browser suites in Firefox (see suites.mjs).
import { runSuites } from './suites.mjs';

runSuites('Firefox');
