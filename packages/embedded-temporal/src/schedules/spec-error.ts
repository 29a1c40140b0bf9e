/**
 * Raised for a ScheduleSpec the real server would refuse. The Schedules API maps
 * it to INVALID_ARGUMENT; the message mirrors the server's wording where that
 * helps users recognise the problem.
 */
export class ScheduleSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleSpecError';
  }
}
