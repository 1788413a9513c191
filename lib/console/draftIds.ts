/**
 * Draft ids (issue 6: several drafts), shared by the server's DraftRegistry and the console: what URLs
 * (`?draft=`) and directory names carry, and the id of the draft every console starts with.
 */
import { z } from 'zod';

/** The id of the draft every console starts with. */
export const MAIN_DRAFT = 'main';

/** The form of a draft id. */
export const DRAFT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,47}$/;

/** A draft id, checked. */
export const DraftId = z
  .string()
  .regex(DRAFT_ID_PATTERN, 'a draft id is 1-48 lowercase letters, digits and dashes');
